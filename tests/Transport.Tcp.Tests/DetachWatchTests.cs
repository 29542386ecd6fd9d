using System.Diagnostics;
using XCall.Transport;

namespace XCall.Transport.Tcp.Tests;

/// <summary>
/// The process-wide detach watch (<see cref="DetachedFrames"/>): a run of detached work that pauses to receive for
/// longer than the watch stays interested, then resumes and gets stuck, is still handed over; a run whose thread waits
/// for a core is not, until it runs or blocks.
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
                    while (Volatile.Read(ref looks) < seen + 5 && clock.Elapsed < s_generous)
                    {
                        // Stalled, marked, spinning without yielding: the watch sees the run not move while its thread
                        // uses CPU time, and steals it (a thread that only waits for a core is not taken).
                        Thread.SpinWait(10);
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

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_run_whose_thread_waits_for_a_core_is_handed_over_only_once_it_runs_long_or_blocks(bool blocks)
    {
        // What the kernel says of the run's thread comes from the test: runnable and not running (preempted) at first.
        long cpuNs = 1_000_000;
        bool runnable = true;
        int handOvers = 0;
        var frames = new DetachedFrames(() => handOvers++, () => false, _ => Volatile.Read(ref cpuNs), _ => Volatile.Read(ref runnable))
        {
            Watched = true, // the test's looks are the channel's only watch
        };
        using var begun = new ManualResetEventSlim();
        using var release = new ManualResetEventSlim();
        bool? heldAtEnd = null;
        var run = new Thread(() =>
        {
            frames.Begin();
            begun.Set();
            release.Wait(s_generous);
            heldAtEnd = frames.End();
        });
        run.Start();
        Assert.True(begun.Wait(s_generous));
        for (int look = 0; look < 50; look++)
        {
            frames.Tick(); // a run that never moves, its thread runnable with no CPU time used: never taken
        }
        Assert.Equal(0, frames.HandOvers);

        if (blocks)
        {
            Volatile.Write(ref runnable, false); // it now sleeps on something: its work blocks
        }
        else
        {
            Volatile.Write(ref cpuNs, cpuNs + 3_000_000); // it got a core and spent 3 ms in the same run: its work is long
        }
        frames.Tick();
        Assert.Equal(1, frames.HandOvers);
        Assert.Equal(1, handOvers);
        release.Set();
        run.Join();
        Assert.False(heldAtEnd, "the run still held the receiving after the watch took it");
    }

    [SkippableFact]
    public void The_kernel_tells_a_thread_that_sleeps_from_one_that_runs_and_counts_its_CPU_time()
    {
        if (!OperatingSystem.IsLinux())
        {
            throw new SkipException("reads Linux's per-thread clocks and /proc/self/task; this is not Linux");
        }
        int me = OsThreads.CurrentId();
        Assert.True(me > 0);
        Assert.True(OsThreads.IsRunnable(me), "the thread asking is on a CPU, so runnable");
        long before = OsThreads.CpuTime(me);
        var spun = System.Diagnostics.Stopwatch.StartNew();
        while (OsThreads.CpuTime(me) - before < 5_000_000 && spun.Elapsed < s_generous)
        {
            // Spins until the kernel counts 5 ms of this thread's CPU time.
        }
        Assert.True(OsThreads.CpuTime(me) - before >= 5_000_000, "5 ms of spinning not counted as CPU time in 30 s");

        int sleeper = 0;
        using var ready = new ManualResetEventSlim();
        using var wake = new ManualResetEventSlim();
        var thread = new Thread(() =>
        {
            Volatile.Write(ref sleeper, OsThreads.CurrentId());
            ready.Set();
            wake.Wait(s_generous);
        });
        thread.Start();
        ready.Wait(s_generous);
        // The thread blocks in the kernel soon after it signals; /proc says 'S' from then on.
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (OsThreads.IsRunnable(sleeper) != false && clock.Elapsed < s_generous)
        {
            Thread.Yield();
        }
        Assert.False(OsThreads.IsRunnable(sleeper), "a thread blocked on an event read as runnable for 30 s");
        long asleep = OsThreads.CpuTime(sleeper);
        Assert.True(asleep > 0);
        wake.Set();
        thread.Join();
        Assert.Equal(-1, OsThreads.CpuTime(-5));
        Assert.Null(OsThreads.IsRunnable(0));
    }
}
