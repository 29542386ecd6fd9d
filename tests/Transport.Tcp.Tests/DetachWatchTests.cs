using System.Diagnostics;
using XCall.Transport;

namespace XCall.Transport.Tcp.Tests;

/// <summary>
/// The process-wide detach watch (<see cref="DetachedFrames"/>): a run of detached work that pauses to receive for
/// longer than the watch stays interested, then resumes and gets stuck, is still handed over.
/// </summary>
public sealed class DetachWatchTests
{
    private static readonly TimeSpan s_generous = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task A_run_resumed_after_the_watch_let_go_of_its_channel_is_watched_again_and_handed_over()
    {
        var handedOver = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var frames = new DetachedFrames(() => handedOver.TrySetResult(), () => false);
        var letGo = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        var run = new Thread(() =>
        {
            frames.Begin();
            bool paused = frames.Pause(); // waits for a reply, receiving itself: the watch sees no run
            // The watch lets go of a channel after 64 looks without a run, about a millisecond apart; nothing signals it.
            var clock = Stopwatch.StartNew();
            while (paused && frames.Watched && clock.Elapsed < s_generous)
            {
                Thread.Yield();
            }
            letGo.TrySetResult(paused && !frames.Watched);
            frames.Resume(); // the work goes on, and now never returns: only the watch can free the receiving
            handedOver.Task.Wait(s_generous);
            frames.End();
        });
        run.Start();
        Assert.True(await letGo.Task, "the run could not pause, or the watch kept a channel with no run for 30 s");
        await handedOver.Task.WaitAsync(s_generous);
        Assert.Equal(1, frames.HandOvers);
        run.Join();
    }

    [Fact]
    public void A_run_that_pauses_and_resumes_while_the_watch_steals_never_holds_the_receiving_after_a_steal()
    {
        // The receive thread changes its mark with plain stores; the watch steals with a process-wide barrier. Here the
        // watch looks without pause while the run pauses and resumes (each pause is a take of the receiving) and now
        // and then stalls marked, so that steals happen: a pause that succeeds after a steal would be two threads
        // receiving at once.
        int handOvers = 0;
        var frames = new DetachedFrames(() => Volatile.Write(ref handOvers, handOvers + 1), () => false);
        frames.Watched = true; // this test's loop is the channel's only watch
        int looks = 0;
        int violations = 0;
        int lost = 0;
        bool done = false;
        bool endedHolding = false;
        var run = new Thread(() =>
        {
            var clock = Stopwatch.StartNew();
            frames.Begin();
            for (int i = 0; i < 200_000 && clock.Elapsed < s_generous; i++)
            {
                int before = Volatile.Read(ref handOvers);
                if (!frames.Pause())
                {
                    lost++;
                    Assert.False(frames.End(), "a run that lost its mark still held the receiving at its end");
                    // The watch counts its hand-over after the steal that took the mark: wait for that count, or the
                    // next pause's check would take this steal's late count for a steal while paused.
                    while (Volatile.Read(ref handOvers) < lost && clock.Elapsed < s_generous)
                    {
                        Thread.Yield();
                    }
                    frames.Begin();
                    continue;
                }
                if (Volatile.Read(ref handOvers) != before)
                {
                    violations++; // stolen while paused: nobody may steal a run that is not marked
                }
                frames.Resume();
                if ((i & 1023) == 0)
                {
                    int seen = Volatile.Read(ref looks);
                    while (Volatile.Read(ref looks) < seen + 3 && clock.Elapsed < s_generous)
                    {
                        Thread.Yield(); // stalled, marked: the watch sees the run not move and steals it
                    }
                }
            }
            endedHolding = frames.End();
            Volatile.Write(ref done, true);
        });
        run.Start();
        while (!Volatile.Read(ref done))
        {
            frames.Watched = true;
            frames.Tick();
            Interlocked.Increment(ref looks);
        }
        run.Join();
        Assert.Equal(0, violations);
        Assert.True(lost > 0, "the watch never stole the stalled run");
        // Every steal is noticed once: by the next pause, or by the end of the last run.
        Assert.Equal(lost + (endedHolding ? 0 : 1), frames.HandOvers);
        Assert.Equal(frames.HandOvers, Volatile.Read(ref handOvers));
    }
}
