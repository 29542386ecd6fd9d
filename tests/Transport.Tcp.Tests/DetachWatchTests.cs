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
}
