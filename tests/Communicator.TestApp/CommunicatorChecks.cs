namespace XCall.Communicator.TestApp;

/// <summary>
/// Checks every rank of a communicator runs together: the matching rules, synchronous, asynchronous and large
/// messages, and every collective with checked results. A failed check throws <see cref="InvalidOperationException"/>.
/// </summary>
public static class CommunicatorChecks
{
    /// <summary>Runs every check on <paramref name="c"/>, logging each one's name.</summary>
    public static void Run(Communicator c, Action<string> log)
    {
        (string Name, Action<Communicator> Check)[] checks =
        [
            ("order per source and tag", OrderPerSourceAndTag),
            ("any tag", AnyTag),
            ("send sync", SendSync),
            ("large messages", LargeMessages),
            ("async and cancel", AsyncAndCancel),
            ("truncation", Truncation),
            ("barrier", static c => c.Barrier()),
            ("broadcast", Broadcast),
            ("reduce", Reduce),
            ("allreduce", Allreduce),
            ("gather", Gather),
            ("allgather", Allgather),
            ("scatter", Scatter),
            ("alltoall", Alltoall),
            ("split", Split),
        ];
        foreach ((string name, Action<Communicator> check) in checks)
        {
            check(c);
            log($"rank {c.Rank}: {name} ok");
        }
        c.Barrier();
    }

    private static void Expect<T>(T expected, T actual, string what)
    {
        if (!EqualityComparer<T>.Default.Equals(expected, actual))
        {
            throw new InvalidOperationException($"{what}: expected {expected}, got {actual}");
        }
    }

    private static void ExpectSequence<T>(IEnumerable<T> expected, IEnumerable<T> actual, string what)
    {
        if (!expected.SequenceEqual(actual))
        {
            throw new InvalidOperationException($"{what}: expected [{string.Join(", ", expected)}], got [{string.Join(", ", actual)}]");
        }
    }

    /// <summary>Every rank but 0 sends three messages with tag 5, then two with tag 6; rank 0 takes tag 6 first, from any source.</summary>
    private static void OrderPerSourceAndTag(Communicator c)
    {
        if (c.Rank != 0)
        {
            for (int i = 0; i < 3; i++)
            {
                c.Send(c.Rank * 100 + i, 0, 5);
            }
            for (int i = 0; i < 2; i++)
            {
                c.Send<long>([c.Rank, 50 + i], 0, 6);
            }
            return;
        }
        var seen = new Dictionary<int, List<long>>();
        for (int n = 0; n < 2 * (c.Size - 1); n++)
        {
            long[] message = c.ReceiveArray<long>(Communicator.AnySource, 6, out MessageStatus status);
            Expect(6, status.Tag, "tag of an any-source receive");
            Expect(message[0], (long)status.Source, "source in the status");
            Expect(2, status.Count<long>(), "count");
            (seen.TryGetValue(status.Source, out List<long>? list) ? list : seen[status.Source] = []).Add(message[1]);
        }
        for (int source = 1; source < c.Size; source++)
        {
            ExpectSequence([50L, 51L], seen[source], $"tag 6 from rank {source}");
            for (int i = 0; i < 3; i++)
            {
                Expect(source * 100 + i, c.Receive<int>(source, 5), $"tag 5 message {i} from rank {source}");
            }
        }
    }

    /// <summary>Each rank sends its right neighbour a tag of its own; the neighbour receives with any tag.</summary>
    private static void AnyTag(Communicator c)
    {
        int right = (c.Rank + 1) % c.Size;
        int left = (c.Rank - 1 + c.Size) % c.Size;
        c.Send(c.Rank, right, 1000 + c.Rank);
        var value = new int[1];
        MessageStatus status = c.Receive<int>(value, left, Communicator.AnyTag);
        Expect(1000 + left, status.Tag, "any-tag receive's tag");
        Expect(left, value[0], "any-tag receive's value");
        Expect(left, status.Source, "any-tag receive's source");
    }

    /// <summary>Rank 0's synchronous send to the last rank stays pending while that rank has only probed the message.</summary>
    private static void SendSync(Communicator c)
    {
        if (c.Size == 1)
        {
            return;
        }
        int last = c.Size - 1;
        if (c.Rank == 0)
        {
            Task sync = c.SendSyncAsync([1, 2, 3], last, 7);
            Expect(7, c.Receive<int>(last, 8), "the probed note");
            Expect(false, sync.IsCompleted, "send sync completed before its receive");
            c.Send(0, last, 9); // go
            sync.GetAwaiter().GetResult();
            c.SendSync([4], last, 10);
        }
        else if (c.Rank == last)
        {
            MessageStatus probed = c.Probe(0, 7);
            Expect(12, probed.ByteCount, "probed bytes");
            Expect(true, c.TryProbe(0, 7, out MessageStatus again) && again == probed, "try probe");
            c.Send(7, 0, 8);
            c.Receive<int>(0, 9);
            ExpectSequence([1, 2, 3], c.ReceiveArray<int>(0, 7, out _), "send sync's message");
            Expect(4, c.Receive<int>(0, 10), "second send sync");
        }
    }

    /// <summary>1 MiB of doubles around the ring, received once into a posted buffer and once after it arrived; a large span of a struct type; messages around the large-message size.</summary>
    private static void LargeMessages(Communicator c)
    {
        const int count = 1 << 17;
        int right = (c.Rank + 1) % c.Size;
        int left = (c.Rank - 1 + c.Size) % c.Size;
        double[] mine = [.. Enumerable.Range(0, count).Select(i => c.Rank * 1e6 + i)];
        var received = new double[count];
        Task<MessageStatus> posted = c.ReceiveAsync<double>(received, left, 20);
        c.Send(mine, right, 20);
        Expect(count * 8, posted.GetAwaiter().GetResult().ByteCount, "large receive's bytes");
        Expect(left * 1e6 + count - 1, received[^1], "large posted receive's last value");
        c.Send(mine, right, 21);
        c.Barrier(); // the message has arrived before its receive is posted
        double[] late = c.ReceiveArray<double>(left, 21, out _);
        Expect(count, late.Length, "large late receive's length");
        Expect(left * 1e6 + 12345, late[12345], "large late receive's value");
        var pairs = new (int A, long B)[5000];
        for (int i = 0; i < pairs.Length; i++)
        {
            pairs[i] = (i, -i);
        }
        c.Send<(int, long)>(pairs.AsSpan(), right, 22);
        (int A, long B)[] back = c.ReceiveArray<(int, long)>(left, 22, out _);
        Expect(pairs.Length, back.Length, "struct span's length");
        Expect((4999, -4999L), back[^1], "struct span's last value");

        // Either side of LargeMessageBytes (one way below it, a call from it on), and past the transport's lending
        // threshold, each from a slice of an array's memory (lent from its offset when large enough).
        foreach (int bytes in (int[])[Communicator.LargeMessageBytes - 8, Communicator.LargeMessageBytes, 40 << 10])
        {
            long[] source = [.. Enumerable.Range(0, (bytes / 8) + 3).Select(i => (c.Rank * 1_000_000L) + i)];
            c.Send<long>(source.AsMemory(3, bytes / 8), right, 23);
            long[] got = c.ReceiveArray<long>(left, 23, out MessageStatus status);
            Expect(bytes, status.ByteCount, $"{bytes} B message's bytes");
            Expect((left * 1_000_000L) + 3, got[0], $"{bytes} B message's first value");
            Expect((left * 1_000_000L) + 2 + (bytes / 8), got[^1], $"{bytes} B message's last value");
        }
    }

    /// <summary>A cancelled receive takes nothing: the message sent after it goes to the next receive.</summary>
    private static void AsyncAndCancel(Communicator c)
    {
        int right = (c.Rank + 1) % c.Size;
        int left = (c.Rank - 1 + c.Size) % c.Size;
        using (var cancel = new CancellationTokenSource())
        {
            Task<MessageStatus> waiting = c.ReceiveAsync<int>(new int[1], left, 30, cancel.Token);
            cancel.Cancel();
            try
            {
                waiting.GetAwaiter().GetResult();
                throw new InvalidOperationException("a cancelled receive completed");
            }
            catch (OperationCanceledException)
            {
            }
        }
        c.Barrier();
        Task send = c.SendAsync<int>(new[] { c.Rank, 1 }, right, 30);
        Task<int[]> receive = c.ReceiveArrayAsync<int>(left, 30);
        Communicator.WaitAll(send, receive);
        ExpectSequence([left, 1], receive.Result, "async message after a cancelled receive");
        Task<MessageStatus>[] two = [c.ReceiveAsync<int>(new int[1], left, 31), c.ReceiveAsync<int>(new int[1], left, 32)];
        c.Send(5, right, 32);
        Expect(1, Communicator.WaitAny(two), "the receive that completed first");
        c.Barrier(); // every rank's WaitAny returned before any tag 31 is sent
        c.Send(5, right, 31);
        Communicator.WaitAll(two);
    }

    private static void Truncation(Communicator c)
    {
        int right = (c.Rank + 1) % c.Size;
        int left = (c.Rank - 1 + c.Size) % c.Size;
        c.Send<int>([1, 2, 3, 4], right, 40);
        try
        {
            c.Receive<int>(new int[2], left, 40);
            throw new InvalidOperationException("a 16-byte message fit in 8 bytes");
        }
        catch (MessageTruncatedException e)
        {
            Expect(16, e.MessageBytes, "truncated message's bytes");
        }
        c.Send(6, right, 40);
        Expect(6, c.Receive<int>(left, 40), "the message after a truncated one");
    }

    private static void Broadcast(Communicator c)
    {
        for (int root = 0; root < c.Size; root++)
        {
            Expect(root * 7, c.Broadcast(c.Rank == root ? root * 7 : -1, root), $"broadcast of a value from {root}");
            double[] data = c.Rank == root ? [.. Enumerable.Range(0, 10_000).Select(i => (double)(i + root))] : new double[10_000];
            c.Broadcast(data, root);
            Expect(9_999.0 + root, data[^1], $"broadcast of an array from {root}");
        }
    }

    private static void Reduce(Communicator c)
    {
        int n = c.Size;
        for (int root = 0; root < n; root++)
        {
            long sum = c.Reduce((long)c.Rank + 1, ReduceOperation.Sum<long>(), root);
            Expect(c.Rank == root ? (long)n * (n + 1) / 2 : 0, sum, $"reduce sum at {root}");
            int[]? max = c.Rank == root ? new int[3] : null;
            c.Reduce([c.Rank, -c.Rank, 5], max, ReduceOperation.Max<int>(), root);
            if (c.Rank == root)
            {
                ExpectSequence([n - 1, 0, 5], max!, $"reduce max at {root}");
            }
        }
    }

    private static void Allreduce(Communicator c)
    {
        int n = c.Size;
        Expect(n * (n - 1) / 2, c.Allreduce(c.Rank, ReduceOperation.Sum<int>()), "allreduce of one value");
        Expect(0, c.Allreduce(c.Rank, ReduceOperation.Min<int>()), "allreduce min");
        Expect(Enumerable.Range(1, n).Aggregate(1L, (a, b) => a * b), c.Allreduce((long)c.Rank + 1, ReduceOperation.Product<long>()), "allreduce product");
        // A user operation: the sum of squares travels as (sum, count) pairs.
        (int Sum, int Count) pair = c.Allreduce((c.Rank * c.Rank, 1), ReduceOperation.Create<(int Sum, int Count)>((a, b) => (a.Sum + b.Sum, a.Count + b.Count)));
        Expect((Enumerable.Range(0, n).Sum(r => r * r), n), pair, "allreduce with a user operation");
        foreach (int count in new[] { 1, 7, 300, 1000, 100_003 })
        {
            double[] send = [.. Enumerable.Range(0, count).Select(i => (double)(i % 97) * (c.Rank + 1))];
            var receive = new double[count];
            c.Allreduce(send, receive, ReduceOperation.Sum<double>());
            double factor = n * (n + 1) / 2.0;
            for (int i = 0; i < count; i++) // every value: each algorithm splits the array its own way
            {
                Expect((i % 97) * factor, receive[i], $"allreduce of {count} doubles at {i}");
            }
            c.Allreduce(send, send, ReduceOperation.Max<double>());
            for (int i = 0; i < count; i++)
            {
                Expect((i % 97) * (double)n, send[i], $"allreduce max in place of {count} at {i}");
            }
        }
    }

    private static void Gather(Communicator c)
    {
        for (int root = 0; root < c.Size; root++)
        {
            int[]? all = c.Gather(c.Rank * 10, root);
            if (c.Rank == root)
            {
                ExpectSequence(Enumerable.Range(0, c.Size).Select(r => r * 10), all!, $"gather at {root}");
            }
            long[]? blocks = c.Rank == root ? new long[3 * c.Size] : null;
            c.Gather([c.Rank, c.Rank + 100L, c.Rank + 200L], blocks, root);
            if (c.Rank == root)
            {
                ExpectSequence(Enumerable.Range(0, c.Size).SelectMany(r => new long[] { r, r + 100, r + 200 }), blocks!, $"gather of blocks at {root}");
            }
        }
    }

    private static void Allgather(Communicator c)
    {
        ExpectSequence(Enumerable.Range(0, c.Size), c.Allgather(c.Rank), "allgather of values");
        const int n = 20_000; // blocks past the large-message size
        var all = new int[n * c.Size];
        c.Allgather([.. Enumerable.Range(0, n).Select(i => c.Rank * n + i)], all);
        ExpectSequence(Enumerable.Range(0, n * c.Size), all, "allgather of large blocks");
    }

    private static void Scatter(Communicator c)
    {
        for (int root = 0; root < c.Size; root++)
        {
            int[]? send = c.Rank == root ? [.. Enumerable.Range(0, 2 * c.Size).Select(i => i + root)] : null;
            var mine = new int[2];
            c.Scatter(send, mine, root);
            ExpectSequence([2 * c.Rank + root, 2 * c.Rank + 1 + root], mine, $"scatter from {root}");
        }
    }

    private static void Alltoall(Communicator c)
    {
        // Block d of rank s holds s * 1000 + d, twice.
        int[] send = [.. Enumerable.Range(0, c.Size).SelectMany(d => new[] { c.Rank * 1000 + d, c.Rank * 1000 + d })];
        var receive = new int[send.Length];
        c.Alltoall(send, receive);
        ExpectSequence(Enumerable.Range(0, c.Size).SelectMany(s => new[] { s * 1000 + c.Rank, s * 1000 + c.Rank }), receive, "alltoall");
    }

    /// <summary>Even and odd ranks split, each group ranked in reverse; rank 0 of the world joins none when the world has more than two ranks.</summary>
    private static void Split(Communicator c)
    {
        int color = c.Size > 2 && c.Rank == 0 ? -1 : c.Rank % 2;
        Communicator? half = c.Split(color, -c.Rank);
        if (color < 0)
        {
            Expect(true, half is null, "a rank with a negative color gets no communicator");
            return;
        }
        int[] members = [.. Enumerable.Range(0, c.Size).Where(r => r % 2 == color && !(c.Size > 2 && r == 0)).Reverse()];
        Expect(members.Length, half!.Size, "split size");
        Expect(Array.IndexOf(members, c.Rank), half.Rank, "split rank");
        ExpectSequence(members, half.Allgather(c.Rank), "split members in key order");
        Expect(members.Sum(), half.Allreduce(c.Rank, ReduceOperation.Sum<int>()), "allreduce on the split");
        // Point to point on the split does not mix with the world's.
        if (half.Size > 1)
        {
            half.Send(c.Rank, (half.Rank + 1) % half.Size, 1);
            Expect(members[(half.Rank - 1 + half.Size) % half.Size], half.Receive<int>((half.Rank - 1 + half.Size) % half.Size, 1), "message on the split");
        }
        Expect(false, c.TryProbe(Communicator.AnySource, Communicator.AnyTag, out _), "a split message seen on the world");
    }
}
