using System.Diagnostics;
using XCall.Transport;

namespace XCall.Transport.Tcp.Tests;

/// <summary>
/// The process-wide detach watch (<see cref="DetachedFrames"/>): a run of detached work that pauses to receive for
/// longer than the watch stays interested, then resumes and gets stuck, is still handed over; a run whose thread waits
/// for a core is not, until it runs long, blocks, stays stuck 20 ms or its channel stops.
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
            // The watch lets go of a channel after 64 looks without a run, 1-4 ms apart; nothing signals it.
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
    public void The_watch_looks_again_a_millisecond_after_it_saw_a_run_and_backs_off_to_four_while_it_sees_none()
    {
        var frames = new DetachedFrames(() => { }, () => false, _ => -1, _ => null);
        frames.Watched = true;
        Assert.True(frames.Tick());
        Assert.False(frames.RunSeen);
        frames.Begin(); // a run goes on at the next look
        Assert.True(frames.Tick());
        Assert.True(frames.RunSeen);
        Assert.True(frames.End());
        Assert.True(frames.Tick());
        Assert.False(frames.RunSeen);

        Assert.Equal([2, 4, 4, 1, 2], new[] { (1, false), (2, false), (4, false), (4, true), (1, false) }.Select(l => DetachWatch.NextTickMs(l.Item1, l.Item2)));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_run_that_pauses_and_resumes_while_the_watch_steals_never_holds_the_receiving_after_a_steal(bool takes)
    {
        // The receive thread changes its mark with plain stores; the watch steals with a process-wide barrier. Here the
        // watch looks without pause while the run pauses and resumes (each pause is a take of the receiving) and now
        // and then stalls marked, so that steals happen: a pause that succeeds after a steal would be two threads
        // receiving at once. With takes, the run takes its next frames as a run of one-way calls does (BeginTake and
        // EndTake, which keep the mark and hold the watch off instead of taking the mark away).
        int handOvers = 0;
        // The kernel's view of the run's thread is "cannot tell", so a stalled run is taken on its second look, as
        // where there is no such view: this test is about the marks, and a look at a preempted thread would wait.
        var frames = new DetachedFrames(() => Volatile.Write(ref handOvers, handOvers + 1), () => false, _ => -1, _ => null);
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
                if (!(takes ? frames.BeginTake() : frames.Pause()))
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
                if ((i & 1023) == 512)
                {
                    int seen = Volatile.Read(ref looks);
                    while (Volatile.Read(ref looks) < seen + 3 && clock.Elapsed < s_generous)
                    {
                        Thread.Yield(); // stalled inside the pause or take: the watch sees the run not move, and must not take it
                    }
                }
                if (Volatile.Read(ref handOvers) != before)
                {
                    violations++; // stolen while paused (or taking): nobody may steal a run that is not marked or in a take
                }
                if (takes)
                {
                    frames.EndTake();
                }
                else
                {
                    frames.Resume();
                }
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

    /// <summary>What the test says the kernel reports of the run's thread, and whether the channel stops.</summary>
    private sealed class FakeKernel
    {
        public long CpuNs = 1_000_000;
        public bool Runnable = true;
        public bool Stopping;
    }

    /// <summary>A run begun on a thread of its own, which then waits to be let go; <paramref name="kernel"/> speaks for it.</summary>
    private sealed class StuckRun : IDisposable
    {
        private readonly ManualResetEventSlim _release = new();
        private readonly Thread _thread;
        private bool? _heldAtEnd;

        /// <summary><paramref name="stuckBound"/>: the longest a preempted run is left alone (by default longer than any
        /// test runs, so a test thread the machine holds up does not reach it).</summary>
        public StuckRun(FakeKernel kernel, TimeSpan? stuckBound = null)
        {
            long boundNs = (long)(stuckBound ?? TimeSpan.FromHours(1)).TotalNanoseconds;
            Frames = new DetachedFrames(() => HandOvers++, () => Volatile.Read(ref kernel.Stopping), _ => Volatile.Read(ref kernel.CpuNs), _ => Volatile.Read(ref kernel.Runnable), boundNs)
            {
                Watched = true, // the test's looks are the channel's only watch
            };
            using var begun = new ManualResetEventSlim();
            _thread = new Thread(() =>
            {
                Frames.Begin();
                begun.Set();
                _release.Wait(s_generous);
                _heldAtEnd = Frames.End();
            });
            _thread.Start();
            Assert.True(begun.Wait(s_generous), "the run did not begin in 30 s");
            Frames.Tick(); // the look that sees the run begin: it moved, so it is not stuck yet
        }

        public DetachedFrames Frames { get; }

        public int HandOvers;

        /// <summary>Looks until the run is taken, at most <paramref name="looks"/> times, each at least <paramref name="apart"/>
        /// after the one before; returns the looks it took (one past <paramref name="looks"/>: never taken).</summary>
        public int LookUntilTaken(int looks, TimeSpan apart = default)
        {
            for (int look = 1; look <= looks; look++)
            {
                var clock = Stopwatch.StartNew();
                while (clock.Elapsed < apart)
                {
                    Thread.SpinWait(20); // spaces the looks in time; nothing to wait for
                }
                Frames.Tick();
                if (Frames.HandOvers != 0)
                {
                    return look;
                }
            }
            return looks + 1;
        }

        public void Dispose()
        {
            _release.Set();
            _thread.Join();
            Assert.Equal(Frames.HandOvers, HandOvers);
            Assert.False(Frames.HandOvers != 0 && _heldAtEnd == true, "the run still held the receiving after the watch took it");
            _release.Dispose();
        }
    }

    private static void SkipWithoutThreadIds()
    {
        if (OsThreads.CurrentId() == 0)
        {
            throw new SkipException("the watch tells a preempted thread only where the kernel gives thread ids (64-bit Linux on x86-64 or arm64); here it does not");
        }
    }

    [SkippableTheory]
    [InlineData(false)]
    [InlineData(true)]
    public void A_run_whose_thread_waits_for_a_core_is_not_taken_until_it_runs_long_or_blocks(bool blocks)
    {
        SkipWithoutThreadIds();
        var kernel = new FakeKernel();
        using var run = new StuckRun(kernel);
        Assert.Equal(51, run.LookUntilTaken(50)); // runnable, no CPU time used: preempted, left alone
        if (blocks)
        {
            Volatile.Write(ref kernel.Runnable, false); // it now sleeps on something: its work blocks
        }
        else
        {
            Volatile.Write(ref kernel.CpuNs, kernel.CpuNs + 3_000_000); // it got a core and spent 3 ms in the same run
        }
        Assert.Equal(1, run.LookUntilTaken(1));
    }

    [SkippableFact]
    public void A_run_whose_thread_sleeps_is_taken_on_its_first_stuck_look()
    {
        SkipWithoutThreadIds();
        var kernel = new FakeKernel { Runnable = false };
        using var run = new StuckRun(kernel);
        Assert.Equal(1, run.LookUntilTaken(1));
    }

    [SkippableFact]
    public void A_preempted_run_of_a_channel_that_stops_is_taken_at_once()
    {
        SkipWithoutThreadIds();
        var kernel = new FakeKernel();
        using var run = new StuckRun(kernel);
        Assert.Equal(6, run.LookUntilTaken(5));
        Volatile.Write(ref kernel.Stopping, true);
        Assert.Equal(1, run.LookUntilTaken(1));
    }

    [SkippableFact]
    public void A_run_that_gets_a_slice_of_a_core_is_taken_once_it_used_2_ms_of_CPU()
    {
        SkipWithoutThreadIds();
        var kernel = new FakeKernel();
        using var run = new StuckRun(kernel);
        Assert.Equal(2, run.LookUntilTaken(1)); // not taken: the first stuck look notes the CPU time
        int looks = 0;
        for (int look = 1; look <= 12 && run.Frames.HandOvers == 0; look++)
        {
            Volatile.Write(ref kernel.CpuNs, kernel.CpuNs + 300_000); // 0.3 ms of CPU in each look's 1 ms and more: under half
            looks = look;
            run.LookUntilTaken(1, TimeSpan.FromMilliseconds(1));
        }
        // Taken on the look that counts 2 ms since the first stuck look (the seventh).
        Assert.Equal(1, run.Frames.HandOvers);
        Assert.Equal(7, looks);
    }

    [SkippableFact]
    public void A_run_stuck_20_ms_is_taken_even_if_its_thread_only_waits_for_a_core()
    {
        SkipWithoutThreadIds();
        var kernel = new FakeKernel();
        using var run = new StuckRun(kernel, TimeSpan.FromMilliseconds(20)); // the watch's own bound
        var stuck = Stopwatch.StartNew();
        int looks = run.LookUntilTaken(1000, TimeSpan.FromMilliseconds(1));
        Assert.True(looks <= 1000, "a run stuck for 1,000 looks of 1 ms was never taken");
        Assert.True(stuck.Elapsed >= TimeSpan.FromMilliseconds(20), $"taken after {stuck.Elapsed.TotalMilliseconds:0.0} ms, before the 20 ms bound");
    }

    [SkippableFact]
    public void The_kernel_tells_a_thread_that_sleeps_from_one_that_runs_and_counts_each_thread_s_CPU_time()
    {
        SkipWithoutThreadIds();
        int me = OsThreads.CurrentId();
        Assert.NotEqual(Environment.ProcessId, me); // a test thread is not the process's first thread
        Assert.True(OsThreads.IsRunnable(me), "the thread asking is on a CPU, so runnable");

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
        try
        {
            Assert.True(ready.Wait(s_generous), "the sleeping thread did not start in 30 s");
            // The thread blocks in the kernel soon after it signals; /proc says 'S' from then on.
            var clock = Stopwatch.StartNew();
            while (OsThreads.IsRunnable(sleeper) != false && clock.Elapsed < s_generous)
            {
                Thread.Yield();
            }
            Assert.False(OsThreads.IsRunnable(sleeper), "a thread blocked on an event read as runnable for 30 s");

            long mine = OsThreads.CpuTime(me);
            long its = OsThreads.CpuTime(sleeper);
            Assert.True(mine > 0 && its > 0);
            var spun = Stopwatch.StartNew();
            while (OsThreads.CpuTime(me) - mine < 5_000_000 && spun.Elapsed < s_generous)
            {
                // Spins until the kernel counts 5 ms of this thread's CPU time.
            }
            Assert.True(OsThreads.CpuTime(me) - mine >= 5_000_000, "5 ms of spinning not counted as this thread's CPU time in 30 s");
            Assert.True(OsThreads.CpuTime(sleeper) - its < 1_000_000, "the sleeping thread was counted the spinning thread's CPU time");
        }
        finally
        {
            wake.Set();
            thread.Join();
        }
        Assert.Equal(-1, OsThreads.CpuTime(-5));
        Assert.Null(OsThreads.IsRunnable(0));
    }
}
