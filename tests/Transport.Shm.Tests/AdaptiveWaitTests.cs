using System.Text;
using XCall.Transport.Shm.Ring;
using XCall.Transport.Shm.TestHost;
using XCall.Transport.Shm.Tests.Support;

namespace XCall.Transport.Shm.Tests;

/// <summary>
/// The adaptive wait (IdleSpinner, SpinTuner, CoreDemand): how a wait's spinning ends, what its site learns, and that
/// callers whose waits back off to the futex still get every reply. Behaviour only: no figure of time is asserted.
/// The tests that force CoreDemand's answer share one collection, run alone (the answer is process-wide).
/// </summary>
[Collection(nameof(CoreDemandCollection))]
public sealed class AdaptiveWaitTests : IDisposable
{
    private readonly TestDirectory _dir = new();

    public void Dispose()
    {
        CoreDemand.ForceOversubscribed(null);
        _dir.Dispose();
    }

    private static int TurnsUntilSleep(ref IdleSpinner spinner, ShmIdleStrategy strategy)
    {
        int turns = 0;
        while (spinner.SpinOnce(strategy))
        {
            turns++;
        }
        return turns;
    }

    [Fact]
    public void A_wait_on_oversubscribed_cores_stops_at_the_probe_turn_without_yields_and_teaches_nothing()
    {
        CoreDemand.ForceOversubscribed(true);
        var tuner = new SpinTuner();
        var spinner = new IdleSpinner(tuner);
        Assert.Equal(IdleSpinner.ProbeTurn, TurnsUntilSleep(ref spinner, ShmIdleStrategy.Adaptive));
        Assert.True(spinner.WasCut);
        Assert.False(spinner.SpinOnce(ShmIdleStrategy.Adaptive)); // stays over until the caller starts again
        Assert.Equal(SpinTuner.Ceiling, tuner.Limit);
        spinner.Reset();
        Assert.Equal(IdleSpinner.ProbeTurn, TurnsUntilSleep(ref spinner, ShmIdleStrategy.Blocking));
    }

    [Fact]
    public void A_wait_on_free_cores_spins_its_budget_yields_then_sleeps_and_its_site_spins_less_next_time()
    {
        CoreDemand.ForceOversubscribed(false);
        var tuner = new SpinTuner();
        var spinner = new IdleSpinner(tuner);
        int first = TurnsUntilSleep(ref spinner, ShmIdleStrategy.Adaptive);
        Assert.False(spinner.WasCut);
        Assert.True(first > SpinTuner.Ceiling, $"{first} turns: the whole spin budget and then yields");
        Assert.True(tuner.Limit < SpinTuner.Ceiling);
        spinner.Restart();
        Assert.True(TurnsUntilSleep(ref spinner, ShmIdleStrategy.Adaptive) < first);
    }

    [Fact]
    public void A_wait_that_gives_way_stops_when_half_a_thread_waits_for_a_core_and_a_callers_wait_spins_on()
    {
        CoreDemand.ForceOversubscribed(true, byAThread: false);
        var receiveTuner = new SpinTuner();
        var receiving = new IdleSpinner(receiveTuner, SpinCut.ByHalfAThread);
        Assert.Equal(IdleSpinner.ProbeTurn, TurnsUntilSleep(ref receiving, ShmIdleStrategy.Adaptive));
        Assert.True(receiving.WasCut);
        Assert.Equal(SpinTuner.Ceiling, receiveTuner.Limit);
        var calling = new IdleSpinner(new SpinTuner());
        int turns = TurnsUntilSleep(ref calling, ShmIdleStrategy.Adaptive);
        Assert.False(calling.WasCut);
        Assert.True(turns > SpinTuner.Ceiling, $"{turns} turns: the whole spin budget and then yields");

        CoreDemand.ForceOversubscribed(false);
        receiving = new IdleSpinner(new SpinTuner(), SpinCut.ByHalfAThread);
        Assert.True(TurnsUntilSleep(ref receiving, ShmIdleStrategy.Adaptive) > SpinTuner.Ceiling);
        Assert.False(receiving.WasCut);
    }

    [Fact]
    public void A_synchronous_callers_wait_for_its_reply_spins_its_budget_and_yields_even_on_oversubscribed_cores()
    {
        CoreDemand.ForceOversubscribed(true);
        var tuner = new SpinTuner();
        var calling = new IdleSpinner(tuner, SpinCut.Never);
        int turns = TurnsUntilSleep(ref calling, ShmIdleStrategy.Adaptive);
        Assert.False(calling.WasCut);
        Assert.True(turns > SpinTuner.Ceiling, $"{turns} turns: the whole spin budget and then yields");
        Assert.True(tuner.Limit < SpinTuner.Ceiling); // a wait spun out teaches its site, as on free cores

        var writing = new IdleSpinner(null); // a writer waiting for room (or an asynchronous call) is still cut
        Assert.Equal(IdleSpinner.ProbeTurn, TurnsUntilSleep(ref writing, ShmIdleStrategy.Adaptive));
        Assert.True(writing.WasCut);
    }

    [Fact]
    public void A_wait_whose_peer_spins_yields_amid_a_long_spin_on_free_cores_only_and_a_callers_wait_never_does()
    {
        CoreDemand.ForceOversubscribed(false);
        int before = IdleSpinner.YieldsAmidSpinOnThisThread;
        var channelWait = new IdleSpinner(new SpinTuner(), SpinCut.Never, yieldsAmidSpin: true);
        int turns = TurnsUntilSleep(ref channelWait, ShmIdleStrategy.Adaptive);
        Assert.True(turns > SpinTuner.Ceiling, $"{turns} turns: the whole spin budget and then yields");
        Assert.Equal((SpinTuner.Ceiling - 1) / IdleSpinner.YieldEvery, IdleSpinner.YieldsAmidSpinOnThisThread - before);
        before = IdleSpinner.YieldsAmidSpinOnThisThread;
        var calling = new IdleSpinner(new SpinTuner(), SpinCut.Never);
        TurnsUntilSleep(ref calling, ShmIdleStrategy.Adaptive);
        Assert.Equal(before, IdleSpinner.YieldsAmidSpinOnThisThread);

        // More threads want the cores than there are: a yield would hand one of them a time slice, so the spin goes on.
        CoreDemand.ForceOversubscribed(true, byAThread: false);
        channelWait = new IdleSpinner(new SpinTuner(), SpinCut.Never, yieldsAmidSpin: true);
        turns = TurnsUntilSleep(ref channelWait, ShmIdleStrategy.Adaptive);
        Assert.True(turns > SpinTuner.Ceiling, $"{turns} turns: the whole spin budget and then yields");
        Assert.Equal(before, IdleSpinner.YieldsAmidSpinOnThisThread);
    }

    [Fact]
    public void Busy_spin_never_sleeps_even_on_oversubscribed_cores()
    {
        CoreDemand.ForceOversubscribed(true);
        var spinner = new IdleSpinner(new SpinTuner());
        for (int i = 0; i < 10 * SpinTuner.Ceiling; i++)
        {
            Assert.True(spinner.SpinOnce(ShmIdleStrategy.BusySpin));
        }
    }

    [Fact]
    public void A_site_whose_spins_keep_failing_reaches_the_floor_and_comes_back_when_work_arrives_soon_after()
    {
        var tuner = new SpinTuner();
        for (int i = 0; i < 100; i++)
        {
            tuner.Exhausted();
        }
        Assert.Equal(SpinTuner.Floor, tuner.Limit);
        tuner.Woke(sleptNs: 10_000_000); // a long sleep: spinning would not have caught it
        Assert.Equal(SpinTuner.Floor, tuner.Limit);
        tuner.Woke(sleptNs: 1_000); // work right after the spin stopped
        Assert.Equal(2 * SpinTuner.Floor, tuner.Limit);
        tuner.Found(turns: 10); // well inside the budget: no change
        Assert.Equal(2 * SpinTuner.Floor, tuner.Limit);
        tuner.Found(turns: 200); // late in the wait (the yields): room for it
        Assert.Equal(400, tuner.Limit);
        tuner.Found(turns: 100_000);
        Assert.Equal(SpinTuner.Ceiling, tuner.Limit);
    }

    [Theory]
    [InlineData("0.52 0.58 0.59 3/467 12345\n", true, 3)]
    [InlineData("38.54 30.63 17.55 22/538 12832\n", true, 22)]
    [InlineData("0.52 0.58 0.59\n", false, 0)]
    [InlineData("0.52 0.58 0.59 x/467 1\n", false, 0)]
    [InlineData("", false, 0)]
    public void The_runnable_count_is_read_from_the_load_average_text(string text, bool parsed, int runnable)
    {
        Assert.Equal(parsed, CoreDemand.TryParseRunnable(Encoding.ASCII.GetBytes(text), out int read));
        Assert.Equal(runnable, read);
    }

    [Theory]
    [InlineData(true, true)]
    [InlineData(true, false)] // only the receive threads give way
    [InlineData(false, true)]
    public async Task Sixteen_threads_on_one_channel_get_every_reply_whether_their_waits_spin_or_sleep(bool oversubscribed, bool byAThread)
    {
        CoreDemand.ForceOversubscribed(oversubscribed, byAThread);
        using EchoPair pair = await EchoPair.StartAsync(_dir, "many");
        await EchoFromThreadsAsync(pair.Echo, threads: 16, calls: 1500);
    }

    [Theory]
    [InlineData(ShmIdleStrategy.Adaptive)]
    [InlineData(ShmIdleStrategy.Blocking)]
    public async Task Threads_sharing_a_connection_yield_beside_the_caller_that_reads_their_replies(ShmIdleStrategy strategy)
    {
        // Eight threads on two cores: while one polls the ring for its reply, the others find the role taken. Adaptive
        // has them yield until the reader completed their calls (or the role frees); Blocking has them block at once.
        using EchoPair pair = await EchoPair.StartAsync(_dir, $"beside-{strategy}", strategy);
        await EchoFromThreadsAsync(pair.Echo, threads: 8, calls: 3000);
        if (strategy == ShmIdleStrategy.Blocking)
        {
            Assert.Equal(0, pair.Client.WaitsEndedBeside);
        }
        else
        {
            Assert.True(pair.Client.WaitsEndedBeside > 0, "no wait ended while its thread yielded beside the reader");
        }
    }

    [Fact]
    public async Task A_caller_that_backed_off_to_the_futex_is_woken_by_its_reply()
    {
        // The caller spins its budget and yields (oversubscribed cores cut no synchronous caller's wait), then sleeps on the ring;
        // the reply, 30 ms later (the server's handler sleeps), must reach it there.
        CoreDemand.ForceOversubscribed(true);
        using EchoPair pair = await EchoPair.StartAsync(_dir, "parked");
        for (int i = 0; i < 5; i++)
        {
            Assert.Equal(new byte[] { 30, (byte)i }, pair.Echo.RoundTrip([30, (byte)i], EchoHandler.SlowMethod));
            Assert.Equal(new byte[] { 7, (byte)i }, pair.Echo.RoundTrip([7, (byte)i]));
        }
        Assert.True(pair.Client.LeaderSleeps >= 5, $"the callers slept {pair.Client.LeaderSleeps} times on the ring");
    }

    /// <summary>Each of <paramref name="threads"/> threads makes <paramref name="calls"/> echo calls, checking every reply.</summary>
    private static Task EchoFromThreadsAsync(EchoClient echo, int threads, int calls) =>
        Task.WhenAll(Enumerable.Range(0, threads).Select(t => Task.Factory.StartNew(() =>
        {
            byte[] payload = new byte[24];
            byte[] reply = new byte[24];
            for (int i = 0; i < calls; i++)
            {
                Patterns.Fill(payload, i, t);
                echo.RoundTrip(payload, reply);
                Assert.Equal(-1, Patterns.FirstMismatch(reply, i, t));
            }
        }, TaskCreationOptions.LongRunning)));

    /// <summary>A listener, an echo server channel and a client connection over it, in this process.</summary>
    private sealed class EchoPair(ShmListener listener, FrameChannel server, ShmChannel client) : IDisposable
    {
        public ShmChannel Client => client;

        public EchoClient Echo { get; } = new(client);

        public static async Task<EchoPair> StartAsync(TestDirectory dir, string name, ShmIdleStrategy strategy = ShmIdleStrategy.Adaptive)
        {
            ShmOptions options = dir.Options(strategy);
            ShmListener listener = ShmTransport.Listen(name, options);
            ValueTask<FrameChannel> accept = listener.AcceptAsync();
            FrameChannel client = await ShmTransport.ConnectAsync(listener.Name, options);
            FrameChannel server = await accept;
            server.Start(new EchoHandler(server));
            return new EchoPair(listener, server, (ShmChannel)client);
        }

        public void Dispose()
        {
            Echo.Dispose();
            server.Dispose();
            listener.Dispose();
        }
    }
}

/// <summary>Makes <see cref="CoreDemand"/> measure again when disposed (after a test forced its answer).</summary>
internal sealed class CoreDemandMeasuredAgain : IDisposable
{
    public void Dispose() => CoreDemand.ForceOversubscribed(null);
}

/// <summary>Tests that force <see cref="CoreDemand"/>'s answer run alone.</summary>
[CollectionDefinition(nameof(CoreDemandCollection), DisableParallelization = true)]
public sealed class CoreDemandCollection;
