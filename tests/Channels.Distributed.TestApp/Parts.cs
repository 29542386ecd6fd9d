using System.Diagnostics;
using System.Globalization;
using XCall.Cluster;

namespace XCall.Channels.Distributed.TestApp;

/// <summary>Each mode's part for one rank; rank 0 is the hub that hosts most names.</summary>
internal static class Parts
{
    private static readonly ChannelCodec<Job> s_jobs = ChannelCodec.Of<Job, XCall.Generated.XCall_Channels_Distributed_TestApp_Job_XCallMarshaller>();

    private static void Say(int rank, string text) => Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"rank {rank} {text}"));

    public static async Task KindsAsync(CspWorld csp, int rank, int size)
    {
        if (rank == 0)
        {
            One2One<int> o2o = await csp.CreateOne2OneAsync<int>("o2o");
            Any2One<string> a2o = await csp.CreateAny2OneAsync<string>("a2o");
            One2Any<Job> o2a = await csp.CreateOne2AnyAsync("o2a", codec: s_jobs);
            await csp.CreateAny2AnyAsync<long>("a2a");
            Say(rank, $"o2o got {await o2o.In.ReadAsync()}");
            var texts = new List<string>();
            for (int i = 1; i < size; i++)
            {
                texts.Add(await a2o.In.ReadAsync());
            }
            texts.Sort(StringComparer.Ordinal);
            Say(rank, $"a2o got {string.Join(",", texts)}");
            for (int i = 1; i < size; i++)
            {
                await o2a.Out.WriteAsync(new Job(i, $"job {i}"));
            }
            Say(rank, $"o2a wrote {size - 1} jobs");
            return;
        }
        if (rank == 1)
        {
            IChannelOut<int> o2o = await csp.OpenOutAsync<int>("o2o");
            await o2o.WriteAsync(101);
        }
        IChannelOut<string> a2oOut = await csp.OpenOutAsync<string>("a2o");
        await a2oOut.WriteAsync($"from {rank}");
        IChannelIn<Job> o2aIn = await csp.OpenInAsync("o2a", s_jobs);
        Job job = await o2aIn.ReadAsync();
        Say(rank, $"o2a got job {job.Id} '{job.Text}'");
        IChannelOut<long> a2aOut = await csp.OpenOutAsync<long>("a2a");
        IChannelIn<long> a2aIn = await csp.OpenInAsync<long>("a2a");
        Task write = a2aOut.WriteAsync(3000 + rank).AsTask();
        Say(rank, $"a2a got {await a2aIn.ReadAsync()}");
        await write;
    }

    public static async Task RendezvousAsync(CspWorld csp, int rank)
    {
        if (rank == 0)
        {
            One2One<int> unbuffered = await csp.CreateOne2OneAsync<int>("rv");
            One2One<int> buffered = await csp.CreateOne2OneAsync("rv-buffered", new FifoBuffer<int>(1));
            Any2One<int> before = await csp.CreateAny2OneAsync<int>("rv-before");
            // The writer's report of its pending write comes first: nothing has read "rv" yet.
            Say(rank, $"write pending while unread: {await before.In.ReadAsync() == 0}");
            Say(rank, $"read {await unbuffered.In.ReadAsync()} and buffered {await buffered.In.ReadAsync()}");
        }
        else if (rank == 1)
        {
            IChannelOut<int> unbuffered = await csp.OpenOutAsync<int>("rv");
            IChannelOut<int> buffered = await csp.OpenOutAsync<int>("rv-buffered");
            IChannelOut<int> before = await csp.OpenOutAsync<int>("rv-before");
            ValueTask write = unbuffered.WriteAsync(5);
            await buffered.WriteAsync(6);
            Say(rank, "buffered write returned before any read");
            // A full round trip to the reader's process later, the unbuffered write must still wait.
            await before.WriteAsync(write.IsCompleted ? 1 : 0);
            await write;
            Say(rank, "unbuffered write returned after the read");
        }
    }

    public static async Task BlockingReadAsync(CspWorld csp, int rank)
    {
        const int N = 200;
        NamedBarrier ready = await csp.BarrierAsync("br-ready", 3);
        if (rank == 0)
        {
            One2One<int> one = await csp.CreateOne2OneAsync<int>("br");
            Any2One<int> any = await csp.CreateAny2OneAsync<int>("br-any");
            Task<string> reader = Task.Factory.StartNew(() =>
            {
                bool inOrder = true;
                for (int i = 0; i < N; i++)
                {
                    inOrder &= one.In.Read() == i;
                }
                bool poisoned = ThrowsPoison(() => one.In.Read());
                int[] next = new int[3];
                bool writerOrder = true;
                for (int i = 0; i < 2 * N; i++)
                {
                    int value = any.In.Read();
                    int writer = value / 100_000;
                    writerOrder &= writer is 1 or 2 && value % 100_000 == next[writer]++;
                }
                bool anyPoisoned = ThrowsPoison(() => any.In.Read());
                return $"blocking reads: o2o {N} in order {inOrder}, poisoned {poisoned}; any2one {next[1]}+{next[2]} in writer order {writerOrder}, poisoned {anyPoisoned}";
            }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
            await ready.SyncAsync(); // the writers open the channels only now: the reader waits with no writer connected yet
            Say(rank, await reader);
            return;
        }
        await ready.SyncAsync();
        NamedBarrier done = await csp.BarrierAsync("br-done", 2);
        await Task.Run(async () =>
        {
            if (rank == 1)
            {
                IChannelOut<int> one = await csp.OpenOutAsync<int>("br");
                for (int i = 0; i < N; i++)
                {
                    one.Write(i);
                }
                one.Poison();
            }
            IChannelOut<int> any = await csp.OpenOutAsync<int>("br-any");
            for (int i = 0; i < N; i++)
            {
                any.Write(rank * 100_000 + i);
            }
            done.Sync(); // every write of both writers was taken: the poison comes after all of them
            if (rank == 1)
            {
                any.Poison();
            }
        });
    }

    /// <summary>
    /// Rank 0 hosts two channels and reads them on one thread, a then b, round after round, and a remote writer writes
    /// both from two threads of rank 1 (one connection): the write to b often comes while the thread waits on a, and
    /// its thread reads the connection meanwhile; the write to b must not keep that thread until b is read.
    /// </summary>
    public static async Task CrossedAsync(CspWorld csp, int rank)
    {
        const int Rounds = 300;
        NamedBarrier ready = await csp.BarrierAsync("cr-ready", 3);
        if (rank == 0)
        {
            One2One<int> a = await csp.CreateOne2OneAsync<int>("cr-a");
            One2One<int> b = await csp.CreateOne2OneAsync<int>("cr-b");
            Task<string> reader = Task.Factory.StartNew(() =>
            {
                bool inOrder = true;
                for (int i = 0; i < Rounds; i++)
                {
                    inOrder &= a.In.Read() == i;
                    inOrder &= b.In.Read() == -i;
                }
                return $"crossed reads: {Rounds} rounds of a then b in order {inOrder}";
            }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
            await ready.SyncAsync();
            Say(rank, await reader);
            return;
        }
        await ready.SyncAsync();
        if (rank == 1)
        {
            IChannelOut<int> a = await csp.OpenOutAsync<int>("cr-a");
            IChannelOut<int> b = await csp.OpenOutAsync<int>("cr-b");
            Task writeB = Task.Factory.StartNew(() =>
            {
                for (int i = 0; i < Rounds; i++)
                {
                    b.Write(-i);
                }
            }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
            Task writeA = Task.Factory.StartNew(() =>
            {
                for (int i = 0; i < Rounds; i++)
                {
                    a.Write(i);
                }
            }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
            await Task.WhenAll(writeA, writeB);
            Say(rank, "crossed writes returned");
        }
    }

    private static bool ThrowsPoison(Action read)
    {
        try
        {
            read();
            return false;
        }
        catch (PoisonException)
        {
            return true;
        }
    }

    public static async Task SelectAsync(CspWorld csp, int rank, int size)
    {
        const int PerWriter = 20;
        NamedBarrier full = await csp.BarrierAsync("select-full", 3);
        if (rank == 0)
        {
            One2One<int> first = await csp.CreateOne2OneAsync("select-1", new FifoBuffer<int>(PerWriter));
            One2One<int> second = await csp.CreateOne2OneAsync("select-2", new FifoBuffer<int>(PerWriter));
            var idle = new One2One<int>(); // in-process, never written
            await full.SyncAsync(); // both writers filled their buffers: both remote guards stay ready
            var alt = new Alternative(first.In, idle.In, second.In);
            var chosen = new List<int>();
            for (int i = 0; i < 2 * PerWriter; i++)
            {
                int index = await alt.FairSelectAsync();
                chosen.Add(index);
                _ = index == 0 ? await first.In.ReadAsync() : await second.In.ReadAsync();
            }
            bool alternated = chosen.Select((index, i) => index == (i % 2 == 0 ? chosen[0] : 2 - chosen[0])).All(ok => ok);
            Say(rank, $"fair select alternated over {chosen.Count} choices: {alternated} ({chosen.Count(c => c == 0)} + {chosen.Count(c => c == 2)})");
            var timer = new CSTimer();
            timer.RelativeTimeout(TimeSpan.FromMilliseconds(50));
            int last = await new Alternative(first.In, second.In, timer).FairSelectAsync();
            Say(rank, $"with empty remote guards the select chose {(last == 2 ? "the timer" : $"guard {last}")}");
            // An output guard: the hosted writer of a One2Any is ready once a remote reader waits.
            One2Any<int> offers = await csp.CreateOne2AnyAsync<int>("select-out");
            var fallback = new CSTimer();
            var outAlt = new Alternative(offers.Out, fallback);
            int taken = 0;
            for (int i = 0; i < 2; i++)
            {
                fallback.RelativeTimeout(TimeSpan.FromSeconds(60)); // only against a hang; the readers come first
                if (await outAlt.FairSelectAsync() == 0)
                {
                    await offers.Out.WriteAsync(7);
                    taken++;
                }
            }
            Say(rank, $"the output guard chose {taken} remote readers");
        }
        else if (rank <= 2)
        {
            IChannelOut<int> output = await csp.OpenOutAsync<int>($"select-{rank}");
            for (int i = 0; i < PerWriter; i++)
            {
                await output.WriteAsync((rank * 100) + i);
            }
            await full.SyncAsync();
            IChannelIn<int> offers = await csp.OpenInAsync<int>("select-out");
            Say(rank, $"read {await offers.ReadAsync()} offered by an output guard");
        }
        _ = size;
    }

    public static async Task PoisonAsync(CspWorld csp, int rank, int size)
    {
        if (rank == 0)
        {
            One2One<int> input = await csp.CreateOne2OneAsync<int>("p-in");
            One2Any<int> output = await csp.CreateOne2AnyAsync<int>("p-out");
            Say(rank, $"read {await input.In.ReadAsync()}");
            try
            {
                await input.In.ReadAsync();
                Say(rank, "read past the poison");
            }
            catch (PoisonException e)
            {
                Say(rank, $"saw poison {e.Strength} from rank 1");
            }
            output.Out.Poison(3);
            return;
        }
        if (rank == 1)
        {
            IChannelOut<int> input = await csp.OpenOutAsync<int>("p-in");
            await input.WriteAsync(1);
            ((IPoisonable)input).Poison(2);
        }
        IChannelIn<int> poisoned = await csp.OpenInAsync<int>("p-out");
        try
        {
            await poisoned.ReadAsync();
            Say(rank, "read past the poison");
        }
        catch (PoisonException e)
        {
            Say(rank, $"saw poison {e.Strength} from rank 0");
        }
        _ = size;
    }

    public static async Task BarrierAsync(CspWorld csp, int rank, int size)
    {
        const int Rounds = 3;
        if (rank == 0)
        {
            await csp.CreateAny2OneAsync<long>("log", new InfiniteBuffer<long>());
        }
        NamedBarrier barrier = await csp.BarrierAsync("rounds", size);
        NamedBucket bucket = await csp.BucketAsync("bucket");
        IChannelOut<long> log = await csp.OpenOutAsync<long>("log");
        for (int round = 0; round < Rounds; round++)
        {
            await log.WriteAsync(Entry(round, passed: false, rank)); // in the host's buffer before this rank syncs
            await barrier.SyncAsync();
            await log.WriteAsync(Entry(round, passed: true, rank));
        }
        if (rank != 0)
        {
            await bucket.FallIntoAsync();
            Say(rank, "left the bucket");
            return;
        }
        // The last rank's pass of the last round is in the log only after it synced; read everything first.
        var entries = new List<long>();
        IChannelIn<long> logIn = await csp.OpenInAsync<long>("log");
        for (int i = 0; i < 2 * Rounds * size; i++)
        {
            entries.Add(await logIn.ReadAsync());
        }
        bool held = Enumerable.Range(0, Rounds).All(round =>
            entries.FindLastIndex(e => e == Entry(round, false, (int)(e % 1000))) < entries.FindIndex(e => e / 1000 == (round * 2) + 1));
        Say(rank, $"barrier held {size} ranks for {Rounds} rounds: {held}");
        // A bucket offers no wait for its holding count: flush until every other rank was released.
        int released = 0;
        while (released < size - 1)
        {
            released += bucket.Flush();
            if (released < size - 1)
            {
                await Task.Delay(1);
            }
        }
        Say(rank, $"bucket released {released} ranks");
    }

    public static async Task KillAsync(CspWorld csp, int rank)
    {
        if (rank == 1)
        {
            await csp.CreateOne2OneAsync<int>("victim");
            One2One<int> armed = await csp.CreateOne2OneAsync<int>("armed");
            await armed.In.ReadAsync(); // rank 0's write to "victim" was sent before this
            Say(rank, "kills itself with SIGKILL");
            Console.Out.Flush();
            using var kill = Process.Start("kill", ["-9", Environment.ProcessId.ToString(CultureInfo.InvariantCulture)]);
            await kill.WaitForExitAsync();
            await Task.Delay(Timeout.Infinite);
        }
        if (rank == 0)
        {
            One2One<int> after = await csp.CreateOne2OneAsync<int>("after");
            IChannelOut<int> victim = await csp.OpenOutAsync<int>("victim");
            IChannelOut<int> armed = await csp.OpenOutAsync<int>("armed");
            ValueTask pending = victim.WriteAsync(1);
            try
            {
                await armed.WriteAsync(1);
            }
            catch (RankFailedException)
            {
                // Rank 1 may die before the reply to this write leaves it; the write to "victim" is what is checked.
            }
            try
            {
                await pending;
                Say(rank, "the write to the dead reader returned");
            }
            catch (RankFailedException e)
            {
                Say(rank, $"write failed: {e.GetType().Name} rank {e.Rank}: {e.Message}");
            }
            Say(rank, $"after the failure read {await after.In.ReadAsync()} from rank 2");
            Environment.Exit(0); // the world holds a failed rank: leave without waiting for it
        }
        if (rank == 2)
        {
            IChannelOut<int> after = await csp.OpenOutAsync<int>("after");
            await after.WriteAsync(42);
            Say(rank, "wrote 42 after the failure");
            Environment.Exit(0);
        }
    }

    public static async Task BufferedAsync(CspWorld csp, int rank, int size)
    {
        const int Many = 20_000;
        const int PerWriter = 5_000;
        if (rank == 0)
        {
            One2One<int> ordered = await csp.CreateOne2OneAsync("b-ordered", new FifoBuffer<int>(64));
            Any2One<long> shared = await csp.CreateAny2OneAsync("b-shared", new FifoBuffer<long>(16));
            One2One<int> poisoned = await csp.CreateOne2OneAsync("b-poisoned", new FifoBuffer<int>(8));
            One2One<int> completed = await csp.CreateOne2OneAsync("b-completed", new FifoBuffer<int>(4096));
            One2One<int> lone = await csp.CreateOne2OneAsync("b-lone", new FifoBuffer<int>(4));
            bool inOrder = true;
            for (int i = 1; i <= Many; i++)
            {
                inOrder &= await ordered.In.ReadAsync() == i;
            }
            Say(rank, $"buffered read {Many} values in order: {inOrder}");
            int read = 0;
            bool poisonedInOrder = true;
            try
            {
                while (true)
                {
                    poisonedInOrder &= await poisoned.In.ReadAsync() == read + 1;
                    read++;
                }
            }
            catch (PoisonException e)
            {
                // The writer's last write returned once 92 values were read; up to 8 more may go with the poison.
                Say(rank, $"poisoned channel gave values in order: {poisonedInOrder}, at least 92: {read >= 92}, then poison {e.Strength}");
            }
            var all = new List<int>();
            try
            {
                while (true)
                {
                    all.Add(await completed.In.ReadAsync());
                }
            }
            catch (System.Threading.Channels.ChannelClosedException)
            {
                Say(rank, $"completed channel gave {all.Count} values in order: {all.SequenceEqual(Enumerable.Range(1, 100))}, then closed");
            }
            int alone = await lone.In.ReadAsync();
            IChannelOut<int> ack = await csp.OpenOutAsync<int>("b-lone-ack");
            await ack.WriteAsync(alone);
            var next = new Dictionary<long, long>();
            int got = 0;
            bool eachInOrder = true;
            for (; got < (size - 1) * PerWriter; got++)
            {
                long value = await shared.In.ReadAsync();
                long writer = value / 1_000_000;
                eachInOrder &= value % 1_000_000 == next.GetValueOrDefault(writer, 1);
                next[writer] = (value % 1_000_000) + 1;
            }
            Say(rank, $"shared buffer got {got} values from {next.Count} writers, each writer's in order: {eachInOrder}");
            return;
        }
        if (rank == 1)
        {
            One2One<int> ack = await csp.CreateOne2OneAsync<int>("b-lone-ack");
            IChannelOut<int> ordered = await csp.OpenOutAsync<int>("b-ordered");
            for (int i = 1; i <= Many; i++)
            {
                ordered.Write(i);
            }
            IChannelOut<int> poisoned = await csp.OpenOutAsync<int>("b-poisoned");
            for (int i = 1; i <= 100; i++)
            {
                await poisoned.WriteAsync(i);
            }
            ((IPoisonable)poisoned).Poison(4);
            IChannelOut<int> lone = await csp.OpenOutAsync<int>("b-lone");
            await lone.WriteAsync(7);
            // Nothing else goes to rank 0 until it answers: the lone value must get there by itself.
            Say(rank, $"lone buffered write was read: {await ack.In.ReadAsync()}");
        }
        if (rank == 2)
        {
            IChannelOut<int> completed = await csp.OpenOutAsync<int>("b-completed");
            for (int i = 1; i <= 100; i++)
            {
                completed.Write(i);
            }
            completed.Complete();
        }
        IChannelOut<long> sharedOut = await csp.OpenOutAsync<long>("b-shared");
        for (int i = 1; i <= PerWriter; i++)
        {
            await sharedOut.WriteAsync((rank * 1_000_000L) + i);
        }
    }

    /// <summary>
    /// Remote writers' batches meet a reader thread blocked in Read and a local writer that takes buffer room the
    /// credits counted on: the host puts what fits in one step and waits for room for the rest, in each writer's order.
    /// </summary>
    public static async Task BatchedAsync(CspWorld csp, int rank, int size)
    {
        const int PerWriter = 30_000;
        if (rank == 0)
        {
            Any2One<long> shared = await csp.CreateAny2OneAsync("batched", new FifoBuffer<long>(32));
            var local = new Thread(() =>
            {
                for (int i = 1; i <= PerWriter; i++)
                {
                    shared.Out.Write((size * 1_000_000L) + i);
                }
            });
            var next = new Dictionary<long, long>();
            bool eachInOrder = true;
            var reader = new Thread(() =>
            {
                for (int got = 0; got < size * PerWriter; got++)
                {
                    long value = shared.In.Read();
                    long writer = value / 1_000_000;
                    eachInOrder &= value % 1_000_000 == next.GetValueOrDefault(writer, 1);
                    next[writer] = (value % 1_000_000) + 1;
                }
            });
            reader.Start();
            local.Start();
            await Task.Run(() =>
            {
                local.Join();
                reader.Join();
            });
            Say(rank, $"batched buffer got {next.Values.Sum() - next.Count} values from {next.Count} writers, each writer's in order: {eachInOrder}");
            return;
        }
        IChannelOut<long> output = await csp.OpenOutAsync<long>("batched");
        for (int i = 1; i <= PerWriter; i++)
        {
            output.Write((rank * 1_000_000L) + i);
        }
    }

    public static async Task KillBufferedAsync(CspWorld csp, int rank)
    {
        if (rank == 1)
        {
            One2One<int> victim = await csp.CreateOne2OneAsync("b-victim", new FifoBuffer<int>(16));
            for (int i = 0; i < 100; i++)
            {
                await victim.In.ReadAsync();
            }
            Say(rank, "read 100 values and kills itself with SIGKILL");
            Console.Out.Flush();
            using var kill = Process.Start("kill", ["-9", Environment.ProcessId.ToString(CultureInfo.InvariantCulture)]);
            await kill.WaitForExitAsync();
            await Task.Delay(Timeout.Infinite);
        }
        IChannelOut<int> writer = await csp.OpenOutAsync<int>("b-victim");
        int written = 0;
        try
        {
            while (true)
            {
                writer.Write(written);
                written++;
            }
        }
        catch (RankFailedException e)
        {
            Say(rank, $"buffered write failed after at least 100 values: {written >= 100}: {e.GetType().Name} rank {e.Rank}: {e.Message}");
        }
        Environment.Exit(0);
    }

    private static long Entry(int round, bool passed, int rank) => (((round * 2) + (passed ? 1 : 0)) * 1000L) + rank;
}
