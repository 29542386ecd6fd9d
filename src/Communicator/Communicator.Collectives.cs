using System.Buffers;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace XCall.Communicator;

public sealed partial class Communicator
{
    // Collectives run on the communicator's collective context, so they never match its point-to-point messages;
    // every rank calls them in the same order and every receive names its source, so the messages of successive
    // collectives cannot be confused either. The tags only tell the collectives apart when debugging.
    private const int BarrierTag = 1;
    private const int BroadcastTag = 2;
    private const int ReduceTag = 3;
    private const int AllreduceTag = 4;
    private const int GatherTag = 5;
    private const int AllgatherTag = 6;
    private const int ScatterTag = 7;
    private const int AlltoallTag = 8;

    /// <summary>
    /// Allreduce messages from this size on reduce-scatter then allgather (recursive halving and doubling, or a ring
    /// when the size is not a power of two); smaller ones use recursive doubling, whose fewer steps cost less where
    /// each step waits for a peer that may have no core.
    /// </summary>
    private const int LargeAllreduceBytes = 64 << 10;

    /// <summary>Allreduce messages up to this size take the partners' values into a span on the stack, with no pooled array.</summary>
    private const int StackAllreduceBytes = 1 << 10;

    /// <summary>Returns once every rank of the communicator has called it (dissemination: log2(size) rounds of messages).</summary>
    public void Barrier()
    {
        byte[] none = [];
        for (int distance = 1; distance < Size; distance <<= 1)
        {
            Exchange(none, 0, 0, (Rank + distance) % Size, none, 0, 0, (Rank - distance + Size) % Size, BarrierTag);
        }
    }

    /// <summary>Copies <paramref name="buffer"/> of <paramref name="root"/> into <paramref name="buffer"/> of every other rank (a binomial tree).</summary>
    public void Broadcast<T>(T[] buffer, int root) where T : unmanaged
    {
        ArgumentNullException.ThrowIfNull(buffer);
        CheckRoot(root);
        int relative = (Rank - root + Size) % Size;
        int mask = 1;
        while (mask < Size)
        {
            if ((relative & mask) != 0)
            {
                ReceiveBlock(buffer, 0, buffer.Length, (relative - mask + root) % Size, BroadcastTag);
                break;
            }
            mask <<= 1;
        }
        for (mask >>= 1; mask > 0; mask >>= 1)
        {
            if (relative + mask < Size)
            {
                SendBlock(buffer, 0, buffer.Length, (relative + mask + root) % Size, BroadcastTag);
            }
        }
    }

    /// <summary><paramref name="value"/> of <paramref name="root"/>, on every rank.</summary>
    public T Broadcast<T>(T value, int root) where T : unmanaged
    {
        T[] one = [value];
        Broadcast(one, root);
        return one[0];
    }

    /// <summary>
    /// Combines <paramref name="send"/> of every rank with <paramref name="operation"/>, index by index, into
    /// <paramref name="receive"/> of <paramref name="root"/> (a binomial tree); other ranks may pass null.
    /// </summary>
    /// <exception cref="ArgumentException">The root's receive array is missing or not as long as <paramref name="send"/>.</exception>
    public void Reduce<T>(T[] send, T[]? receive, ReduceOperation<T> operation, int root) where T : unmanaged
    {
        ArgumentNullException.ThrowIfNull(send);
        ArgumentNullException.ThrowIfNull(operation);
        CheckRoot(root);
        if (Rank == root)
        {
            CheckLength(receive, send.Length, nameof(receive));
        }
        T[] sum = Rank == root ? receive! : new T[send.Length];
        send.AsSpan().CopyTo(sum);
        T[]? incoming = null;
        int relative = (Rank - root + Size) % Size;
        for (int mask = 1; mask < Size; mask <<= 1)
        {
            if ((relative & mask) != 0)
            {
                SendBlock(sum, 0, sum.Length, ((relative & ~mask) + root) % Size, ReduceTag);
                break;
            }
            int child = relative | mask;
            if (child < Size)
            {
                incoming ??= new T[send.Length];
                ReceiveBlock(incoming, 0, incoming.Length, (child + root) % Size, ReduceTag);
                operation.Combine(incoming, sum);
            }
        }
    }

    /// <summary>The combination of every rank's <paramref name="value"/> on <paramref name="root"/>; default elsewhere.</summary>
    public T Reduce<T>(T value, ReduceOperation<T> operation, int root) where T : unmanaged
    {
        T[]? result = Rank == root ? new T[1] : null;
        Reduce([value], result, operation, root);
        return result is null ? default : result[0];
    }

    /// <summary>
    /// Combines <paramref name="send"/> of every rank with <paramref name="operation"/>, index by index, into
    /// <paramref name="receive"/> of every rank (which may be <paramref name="send"/> itself): recursive doubling
    /// for small messages; for large ones a reduce-scatter then an allgather, by recursive halving and doubling
    /// (Rabenseifner's algorithm) or, when the size is not a power of two, a ring.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="receive"/> is not as long as <paramref name="send"/>.</exception>
    public void Allreduce<T>(T[] send, T[] receive, ReduceOperation<T> operation) where T : unmanaged
    {
        ArgumentNullException.ThrowIfNull(send);
        ArgumentNullException.ThrowIfNull(operation);
        CheckLength(receive, send.Length, nameof(receive));
        bool large = send.Length * Unsafe.SizeOf<T>() >= LargeAllreduceBytes && send.Length >= Size;
        if (Size == 1 || !large || !BitOperations.IsPow2(Size))
        {
            if (!ReferenceEquals(send, receive))
            {
                send.AsSpan().CopyTo(receive);
            }
        }
        if (Size == 1)
        {
            return;
        }
        if (!large && send.Length * Unsafe.SizeOf<T>() <= StackAllreduceBytes)
        {
            RecursiveDoublingAllreduce(receive, null, stackalloc T[send.Length], operation);
            return;
        }
        T[] incoming = ArrayPool<T>.Shared.Rent(send.Length);
        try
        {
            if (!large)
            {
                RecursiveDoublingAllreduce(receive, incoming, incoming.AsSpan(0, send.Length), operation);
            }
            else if (BitOperations.IsPow2(Size))
            {
                HalvingDoublingAllreduce(send, receive, incoming, operation);
            }
            else
            {
                RingAllreduce(receive, incoming, operation);
            }
        }
        finally
        {
            ArrayPool<T>.Shared.Return(incoming);
        }
    }

    /// <summary>The combination of every rank's <paramref name="value"/>, on every rank.</summary>
    public T Allreduce<T>(T value, ReduceOperation<T> operation) where T : unmanaged
    {
        T[] one = [value];
        Allreduce(one, one, operation);
        return one[0];
    }

    /// <summary>
    /// Recursive doubling into <paramref name="sum"/> (which holds this rank's values); the partners' values come
    /// into <paramref name="incoming"/> (as long as <paramref name="sum"/>), the first values of
    /// <paramref name="incomingArray"/> when given (a large block lands there straight), else a span on the stack.
    /// </summary>
    private void RecursiveDoublingAllreduce<T>(T[] sum, T[]? incomingArray, Span<T> incoming, ReduceOperation<T> operation) where T : unmanaged
    {
        // Ranks past the largest power of two fold into a partner first and get the result from it last.
        int powerOfTwo = 1;
        while (powerOfTwo * 2 <= Size)
        {
            powerOfTwo *= 2;
        }
        int extra = Size - powerOfTwo;
        int virtualRank;
        if (Rank < 2 * extra)
        {
            if (Rank % 2 == 0)
            {
                SendBlock(sum, 0, sum.Length, Rank + 1, AllreduceTag);
                virtualRank = -1;
            }
            else
            {
                ReceiveInto(incomingArray, incoming, Rank - 1);
                operation.Combine(incoming, sum);
                virtualRank = Rank / 2;
            }
        }
        else
        {
            virtualRank = Rank - extra;
        }
        if (virtualRank >= 0)
        {
            for (int mask = 1; mask < powerOfTwo; mask <<= 1)
            {
                int partnerVirtual = virtualRank ^ mask;
                int partner = partnerVirtual < extra ? partnerVirtual * 2 + 1 : partnerVirtual + extra;
                if (incomingArray is not null)
                {
                    Exchange(sum, 0, sum.Length, partner, incomingArray, 0, sum.Length, partner, AllreduceTag);
                }
                else
                {
                    SendBlock(sum, 0, sum.Length, partner, AllreduceTag); // small: it never waits for its receive
                    ReceiveSpan(incoming, partner, AllreduceTag);
                }
                operation.Combine(incoming, sum);
            }
        }
        if (Rank < 2 * extra)
        {
            if (Rank % 2 == 0)
            {
                ReceiveBlock(sum, 0, sum.Length, Rank + 1, AllreduceTag);
            }
            else
            {
                SendBlock(sum, 0, sum.Length, Rank - 1, AllreduceTag);
            }
        }
    }

    private void ReceiveInto<T>(T[]? array, Span<T> span, int source) where T : unmanaged
    {
        if (array is not null)
        {
            ReceiveBlock(array, 0, span.Length, source, AllreduceTag);
        }
        else
        {
            ReceiveSpan(span, source, AllreduceTag);
        }
    }

    /// <summary>
    /// Rabenseifner's Allreduce on a power-of-two size: a reduce-scatter by recursive halving (each step swaps half
    /// of the range this rank still reduces with the partner across that bit and keeps the other half), then an
    /// allgather by recursive doubling (the steps in reverse, each giving the partner this rank's finished range).
    /// 2 log2(Size) steps moving 2 (Size - 1) / Size of the values, against the ring's 2 (Size - 1) steps.
    /// </summary>
    private void HalvingDoublingAllreduce<T>(T[] send, T[] sum, T[] incoming, ReduceOperation<T> operation) where T : unmanaged
    {
        Span<(int Start, int End)> ranges = stackalloc (int, int)[32]; // the range before each halving step
        int steps = 0;
        int start = 0;
        int end = sum.Length;
        for (int mask = Size >> 1; mask > 0; mask >>= 1)
        {
            int partner = Rank ^ mask;
            int middle = start + ((end - start) / 2);
            bool keepLow = (Rank & mask) == 0;
            (int keepStart, int keepEnd) = keepLow ? (start, middle) : (middle, end);
            (int giveStart, int giveEnd) = keepLow ? (middle, end) : (start, middle);
            T[] from = steps == 0 ? send : sum; // the first step reads the caller's values, so only the kept half is copied
            if (steps == 0 && !ReferenceEquals(send, sum))
            {
                send.AsSpan(keepStart, keepEnd - keepStart).CopyTo(sum.AsSpan(keepStart));
            }
            Exchange(from, giveStart, giveEnd - giveStart, partner, incoming, 0, keepEnd - keepStart, partner, AllreduceTag);
            operation.Combine(incoming.AsSpan(0, keepEnd - keepStart), sum.AsSpan(keepStart, keepEnd - keepStart));
            ranges[steps++] = (start, end);
            (start, end) = (keepStart, keepEnd);
        }
        for (int mask = 1; mask < Size; mask <<= 1)
        {
            (int outerStart, int outerEnd) = ranges[--steps];
            // The partner holds the other part of the range both reduced at this step.
            (int otherStart, int otherEnd) = start == outerStart ? (end, outerEnd) : (outerStart, start);
            Exchange(sum, start, end - start, Rank ^ mask, sum, otherStart, otherEnd - otherStart, Rank ^ mask, AllreduceTag);
            (start, end) = (outerStart, outerEnd);
        }
    }

    /// <summary>The ring Allreduce into <paramref name="sum"/> (which holds this rank's values); <paramref name="incoming"/> holds at least a chunk.</summary>
    private void RingAllreduce<T>(T[] sum, T[] incoming, ReduceOperation<T> operation) where T : unmanaged
    {
        int right = (Rank + 1) % Size;
        int left = (Rank - 1 + Size) % Size;
        (int Start, int Count) Chunk(int index)
        {
            index = ((index % Size) + Size) % Size;
            int size = sum.Length / Size;
            int rest = sum.Length % Size;
            return (index * size + Math.Min(index, rest), size + (index < rest ? 1 : 0));
        }
        // Reduce-scatter: after step s, this rank holds the sum of s + 2 ranks' chunk Rank - s - 1.
        for (int step = 0; step < Size - 1; step++)
        {
            (int sendStart, int sendCount) = Chunk(Rank - step);
            (int receiveStart, int receiveCount) = Chunk(Rank - step - 1);
            Exchange(sum, sendStart, sendCount, right, incoming, 0, receiveCount, left, AllreduceTag);
            operation.Combine(incoming.AsSpan(0, receiveCount), sum.AsSpan(receiveStart, receiveCount));
        }
        // Allgather: this rank holds the whole sum of chunk Rank + 1; pass the finished chunks round.
        for (int step = 0; step < Size - 1; step++)
        {
            (int sendStart, int sendCount) = Chunk(Rank + 1 - step);
            (int receiveStart, int receiveCount) = Chunk(Rank - step);
            Exchange(sum, sendStart, sendCount, right, sum, receiveStart, receiveCount, left, AllreduceTag);
        }
    }

    /// <summary>
    /// Puts <paramref name="send"/> of every rank r at index r * send.Length of <paramref name="receive"/> on
    /// <paramref name="root"/> (a binomial tree); other ranks may pass null.
    /// </summary>
    /// <exception cref="ArgumentException">The root's receive array is missing or not Size * send.Length long.</exception>
    public void Gather<T>(T[] send, T[]? receive, int root) where T : unmanaged
    {
        ArgumentNullException.ThrowIfNull(send);
        CheckRoot(root);
        int n = send.Length;
        if (Rank == root)
        {
            CheckLength(receive, n * Size, nameof(receive));
        }
        int relative = (Rank - root + Size) % Size;
        // This rank collects the blocks of relative ranks relative .. relative + subtree - 1, in that order.
        int subtree = 1;
        while ((relative & subtree) == 0 && subtree < Size)
        {
            subtree <<= 1;
        }
        int blocks = Math.Min(subtree, Size - relative);
        T[] collected = Rank == root && root == 0 ? receive! : new T[blocks * n];
        send.AsSpan().CopyTo(collected);
        for (int mask = 1; mask < Size; mask <<= 1)
        {
            if ((relative & mask) != 0)
            {
                SendBlock(collected, 0, collected.Length, ((relative & ~mask) + root) % Size, GatherTag);
                return;
            }
            int child = relative | mask;
            if (child < Size)
            {
                int childBlocks = Math.Min(mask, Size - child);
                ReceiveBlock(collected, mask * n, childBlocks * n, (child + root) % Size, GatherTag);
            }
        }
        if (!ReferenceEquals(collected, receive))
        {
            // The root holds the blocks in relative order: relative rank v is rank (v + root) % Size.
            for (int v = 0; v < Size; v++)
            {
                Array.Copy(collected, v * n, receive!, ((v + root) % Size) * n, n);
            }
        }
    }

    /// <summary>Every rank's <paramref name="value"/>, in rank order, on <paramref name="root"/>; null elsewhere.</summary>
    public T[]? Gather<T>(T value, int root) where T : unmanaged
    {
        T[]? all = Rank == root ? new T[Size] : null;
        Gather([value], all, root);
        return all;
    }

    /// <summary>Puts <paramref name="send"/> of every rank r at index r * send.Length of <paramref name="receive"/> on every rank (a ring).</summary>
    /// <exception cref="ArgumentException"><paramref name="receive"/> is not Size * send.Length long.</exception>
    public void Allgather<T>(T[] send, T[] receive) where T : unmanaged
    {
        ArgumentNullException.ThrowIfNull(send);
        int n = send.Length;
        CheckLength(receive, n * Size, nameof(receive));
        send.AsSpan().CopyTo(receive.AsSpan(Rank * n));
        int right = (Rank + 1) % Size;
        int left = (Rank - 1 + Size) % Size;
        for (int step = 0; step < Size - 1; step++)
        {
            int sendBlock = (Rank - step + Size) % Size;
            int receiveBlock = (Rank - step - 1 + Size) % Size;
            Exchange(receive, sendBlock * n, n, right, receive, receiveBlock * n, n, left, AllgatherTag);
        }
    }

    /// <summary>Every rank's <paramref name="value"/>, in rank order, on every rank.</summary>
    public T[] Allgather<T>(T value) where T : unmanaged
    {
        var all = new T[Size];
        Allgather([value], all);
        return all;
    }

    /// <summary>
    /// Gives every rank r the block of <paramref name="receive"/>.Length values at index r * receive.Length of
    /// <paramref name="send"/> on <paramref name="root"/> (a binomial tree); other ranks may pass null.
    /// </summary>
    /// <exception cref="ArgumentException">The root's send array is missing or not Size * receive.Length long.</exception>
    public void Scatter<T>(T[]? send, T[] receive, int root) where T : unmanaged
    {
        ArgumentNullException.ThrowIfNull(receive);
        CheckRoot(root);
        int n = receive.Length;
        int relative = (Rank - root + Size) % Size;
        T[] held;
        int mask = 1;
        if (Rank == root)
        {
            CheckLength(send, n * Size, nameof(send));
            held = new T[n * Size];
            for (int v = 0; v < Size; v++)
            {
                Array.Copy(send!, ((v + root) % Size) * n, held, v * n, n);
            }
            while (mask < Size)
            {
                mask <<= 1;
            }
        }
        else
        {
            while ((relative & mask) == 0)
            {
                mask <<= 1;
            }
            int blocks = Math.Min(mask, Size - relative);
            held = new T[blocks * n];
            ReceiveBlock(held, 0, held.Length, (relative - mask + root) % Size, ScatterTag);
        }
        // This rank holds the blocks of relative ranks relative .. relative + mask - 1 (those that exist).
        for (mask >>= 1; mask > 0; mask >>= 1)
        {
            int child = relative + mask;
            if (child < Size)
            {
                int childBlocks = Math.Min(mask, Size - child);
                SendBlock(held, mask * n, childBlocks * n, (child + root) % Size, ScatterTag);
            }
        }
        Array.Copy(held, 0, receive, 0, n);
    }

    /// <summary>
    /// Sends the block at index d * n of <paramref name="send"/> to each rank d and puts the block from each rank s
    /// at index s * n of <paramref name="receive"/>, where n = send.Length / Size (pairwise exchanges).
    /// </summary>
    /// <exception cref="ArgumentException">The arrays' lengths differ or are not a multiple of <see cref="Size"/>.</exception>
    public void Alltoall<T>(T[] send, T[] receive) where T : unmanaged
    {
        ArgumentNullException.ThrowIfNull(send);
        if (send.Length % Size != 0)
        {
            throw new ArgumentException($"The send array's length {send.Length} is not a multiple of the communicator's size {Size}.", nameof(send));
        }
        CheckLength(receive, send.Length, nameof(receive));
        int n = send.Length / Size;
        Array.Copy(send, Rank * n, receive, Rank * n, n);
        for (int step = 1; step < Size; step++)
        {
            int to = (Rank + step) % Size;
            int from = (Rank - step + Size) % Size;
            Exchange(send, to * n, n, to, receive, from * n, n, from, AlltoallTag);
        }
    }

    private void CheckRoot(int root) => ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)root, (uint)Size, nameof(root));

    private static void CheckLength<T>(T[]? array, int length, string name)
    {
        if (array is null || array.Length != length)
        {
            throw new ArgumentException($"The array must hold {length} values; it holds {(array is null ? "none (null)" : array.Length.ToString(System.Globalization.CultureInfo.InvariantCulture))}.", name);
        }
    }

    private void SendBlock<T>(T[] array, int start, int count, int destination, int tag) where T : unmanaged =>
        SendCore<T>(array.AsSpan(start, count), array, start, destination, tag, CollectiveContext);

    private ReceiveRequest<T> PostBlock<T>(T[] array, int start, int count, int source, int tag) where T : unmanaged =>
        Post(new ReceiveRequest<T>(array.AsMemory(start, count), _worldRanks[source], CollectiveContext, tag, asynchronous: false));

    private void ReceiveBlock<T>(T[] array, int start, int count, int source, int tag) where T : unmanaged
    {
        if (!TryReceiveFast(MemoryMarshal.AsBytes(array.AsSpan(start, count)), _worldRanks[source], CollectiveContext, tag, out _, out int spun))
        {
            Await(PostBlock(array, start, count, source, tag), spun);
        }
    }

    /// <summary>Receives a block into <paramref name="into"/>: with no request when it is at hand (see <see cref="TryReceiveFast"/>), else through a pooled array.</summary>
    private void ReceiveSpan<T>(Span<T> into, int source, int tag) where T : unmanaged
    {
        if (TryReceiveFast(MemoryMarshal.AsBytes(into), _worldRanks[source], CollectiveContext, tag, out _, out int spun))
        {
            return;
        }
        T[] rented = ArrayPool<T>.Shared.Rent(into.Length);
        try
        {
            Await(PostBlock(rented, 0, into.Length, source, tag), spun);
            rented.AsSpan(0, into.Length).CopyTo(into);
        }
        finally
        {
            ArrayPool<T>.Shared.Return(rented);
        }
    }

    /// <summary>
    /// Sends one block and receives another. Small blocks go first and the receive takes its block with no request
    /// (a small send never waits for its receive); for a large one the receive is posted first, so the block lands
    /// straight in place.
    /// </summary>
    private void Exchange<T>(T[] send, int sendStart, int sendCount, int destination, T[] receive, int receiveStart, int receiveCount, int source, int tag)
        where T : unmanaged
    {
        if (Math.Max(sendCount, receiveCount) * Unsafe.SizeOf<T>() < LargeMessageBytes)
        {
            SendBlock(send, sendStart, sendCount, destination, tag);
            ReceiveBlock(receive, receiveStart, receiveCount, source, tag);
            return;
        }
        ReceiveRequest<T> incoming = PostBlock(receive, receiveStart, receiveCount, source, tag);
        SendBlock(send, sendStart, sendCount, destination, tag);
        Await(incoming);
    }
}
