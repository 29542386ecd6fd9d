using System.Buffers.Binary;
using System.Runtime.InteropServices;
using XCall.Marshal;
using XCall.Transport;
using XCall.Transport.Shm;
using XCall.Transport.Shm.Ring;

namespace XCall.Fuzz.Tests;

/// <summary>
/// Target "ring": the records a peer publishes in a shared-memory ring, read by the ring's consumer half
/// (record lengths and types, padding, frames in one record, frames split across the lap end, streamed frames,
/// goodbye). The input is what a hostile peer controls: the ring's data area, and the position its consumer
/// starts at. The first two bytes pick the start (in steps of RingLayout.Alignment, where records start); the rest fills the data area from offset 0,
/// zeros after it. The reader polls until the ring is empty, a goodbye, or one lap; it must refuse what it
/// cannot read with <see cref="XCallProtocolException"/> and nothing else.
/// </summary>
public static unsafe class RingTarget
{
    /// <summary>The fuzzed ring's data area: small, so inputs cover a whole lap and its wrap.</summary>
    public const int Capacity = 4096;

    private const int StartBytes = 2;

    public static void Run(ReadOnlySpan<byte> input) => Read(input);

    /// <summary>Reads the ring <paramref name="input"/> describes, as <see cref="Run"/>: the last poll's result (null when
    /// the input is too short, a lap was read, or a record was refused).</summary>
    internal static PollResult? Read(ReadOnlySpan<byte> input)
    {
        if (input.Length < StartBytes)
        {
            return null;
        }
        long start = (BinaryPrimitives.ReadUInt16LittleEndian(input) % (Capacity / RingLayout.Alignment)) * RingLayout.Alignment;
        using var ring = new Ring(start);
        ReadOnlySpan<byte> data = input[StartBytes..];
        data[..Math.Min(data.Length, Capacity)].CopyTo(ring.Data);
        var reader = new RingReader(ring.Shm, ring.Signal, maxFrameLength: 1 << 20);
        var handler = new DrainingHandler();
        try
        {
            // Each poll consumes at least one record (an alignment unit or more) or returns; a lap bounds the loop, since the
            // consumer never clears what it read and a full lap would find the same records again.
            for (int polls = 0; polls <= Capacity / RingLayout.Alignment && reader.Position < start + Capacity; polls++)
            {
                PollResult result = reader.Poll(handler);
                if (result is PollResult.Empty or PollResult.Goodbye)
                {
                    return result;
                }
            }
        }
        catch (XCallProtocolException)
        {
            // The channel closes: the outcome a malformed record must have.
            FuzzTarget.CountRefusal();
        }
        return null;
    }

    /// <summary>Seeds for "ring": records a real <see cref="RingWriter"/> publishes, at the start of a lap and
    /// just before its end (padding, and a frame whose records wrap), with a goodbye after them.</summary>
    public static IEnumerable<(string Name, byte[] Input)> Seeds()
    {
        yield return ("frames", Write(0, [5, 300, 0]));
        yield return ("padding", Write(Capacity - 64, [100, 7]));
        yield return ("wrapped", Write(Capacity - 1024, [2500]));
        yield return ("goodbye", Write(RingLayout.Alignment, []));
    }

    private static byte[] Write(long start, int[] payloads)
    {
        using var ring = new Ring(start);
        var writer = new RingWriter(ring.Shm, ring.Signal);
        ulong callId = 1;
        foreach (int length in payloads)
        {
            writer.BeginFrame(new FrameHeader(FrameKind.Call, callId++, objectId: 1, methodId: 7));
            for (int i = 0; i < length; i++)
            {
                Span<byte> span = writer.GetSpan(1);
                span[0] = (byte)i;
                writer.Advance(1);
            }
            writer.Commit();
        }
        writer.TryWriteControl(RecordType.Goodbye);
        int used = ring.Data.LastIndexOfAnyExcept((byte)0) + 1;
        byte[] input = new byte[StartBytes + RingLayout.Align(used)];
        BinaryPrimitives.WriteUInt16LittleEndian(input, (ushort)(start / RingLayout.Alignment));
        ring.Data[..(input.Length - StartBytes)].CopyTo(input.AsSpan(StartBytes));
        return input;
    }

    /// <summary>A ring in native memory, its positions set to <c>start</c>.</summary>
    private sealed class Ring : IDisposable
    {
        private readonly byte* _memory;

        public Ring(long start)
        {
            nuint length = RingLayout.ControlBlockLength + Capacity;
            _memory = (byte*)NativeMemory.AlignedAlloc(length, 4096);
            NativeMemory.Clear(_memory, length);
            Shm = new ShmRing(_memory, _memory + RingLayout.ControlBlockLength, Capacity);
            *Shm.ProducerPosition = start;
            *Shm.ProducerCachedConsumer = start;
            *Shm.ConsumerPosition = start;
            Signal = new RingSignal(Shm, ShmIdleStrategy.Adaptive, "shm://fuzz", portable: false, poke: null);
        }

        public ShmRing Shm { get; }

        public RingSignal Signal { get; }

        public Span<byte> Data => new(Shm.Data, Capacity);

        public void Dispose() => NativeMemory.AlignedFree(_memory);
    }

    /// <summary>Reads every other frame's payload to its end in odd-sized blocks (across the chunks of a split
    /// frame) and leaves the others unread (the reader skips what a handler left).</summary>
    private sealed class DrainingHandler : IFrameHandler
    {
        private readonly byte[] _block = new byte[61];
        private int _frames;

        public MarshalLimits Limits => MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref MarshalReader payload)
        {
            if (_frames++ % 2 == 1)
            {
                return;
            }
            while (payload.Remaining > 0)
            {
                payload.ReadBlock(_block.AsSpan(0, (int)Math.Min(_block.Length, payload.Remaining)));
            }
        }

        public void OnClosed(Exception? error)
        {
        }
    }
}
