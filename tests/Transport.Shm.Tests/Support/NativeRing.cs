using System.Runtime.InteropServices;
using XCall.Transport.Shm.Ring;

namespace XCall.Transport.Shm.Tests.Support;

/// <summary>A ring in native memory of this process, for ring tests without a segment.</summary>
internal sealed unsafe class NativeRing : IDisposable
{
    private readonly byte* _memory;

    public NativeRing(int capacity, ShmIdleStrategy strategy = ShmIdleStrategy.Adaptive, bool portable = false)
    {
        nuint length = (nuint)(RingLayout.ControlBlockLength + capacity);
        _memory = (byte*)NativeMemory.AlignedAlloc(length, 4096);
        NativeMemory.Clear(_memory, length);
        // Dirty the data area: the ring must never read stale bytes as records.
        new Span<byte>(_memory + RingLayout.ControlBlockLength, capacity).Fill(0xA5);
        *(int*)(_memory + RingLayout.ControlBlockLength) = 0;
        Ring = new ShmRing(_memory, _memory + RingLayout.ControlBlockLength, capacity);
        Signal = new RingSignal(Ring, strategy, "shm://test", portable, poke: null);
        Writer = new RingWriter(Ring, Signal);
        Reader = new RingReader(Ring, Signal, Array.MaxLength);
    }

    public ShmRing Ring { get; }

    public RingSignal Signal { get; }

    public RingWriter Writer { get; }

    public RingReader Reader { get; }

    /// <summary>Writes a whole frame and wakes the reader.</summary>
    public void Send(in FrameHeader header, ReadOnlySpan<byte> payload)
    {
        Writer.BeginFrame(header);
        while (!payload.IsEmpty)
        {
            Span<byte> span = Writer.GetSpan(1);
            int n = Math.Min(span.Length, payload.Length);
            payload[..n].CopyTo(span);
            Writer.Advance(n);
            payload = payload[n..];
        }
        Writer.Commit();
        Signal.WakeConsumerIfSleeping();
    }

    /// <summary>Writes a one-way frame as the channel does (it may be held in a batch) and wakes the reader if it must:
    /// a sleeping reader gets the batch published first.</summary>
    public bool SendOneWay(in FrameHeader header, ReadOnlySpan<byte> payload)
    {
        Writer.BeginFrame(header);
        payload.CopyTo(Writer.GetSpan(payload.Length));
        Writer.Advance(payload.Length);
        bool check = Writer.Commit(hold: true);
        WakeIfChecked(check);
        return check;
    }

    /// <summary>After a held frame: the wake-up check ShmChannel makes, publishing the batch for a reader it wakes.</summary>
    private void WakeIfChecked(bool check)
    {
        int wake = check ? Signal.ClaimConsumerWake(Writer.Tail, polledFor: false) : 0;
        if (wake != 0)
        {
            Writer.PublishHeld();
            Signal.IssueConsumerWake(wake);
        }
    }

    /// <summary>
    /// A one-way frame written in one step (<see cref="RingWriter.TryHoldWhole"/>), as ShmChannel.SendFrame writes one, or
    /// as <see cref="SendOneWay"/> when the writer declines it. Whole: whether the one step took it.
    /// </summary>
    public (bool Whole, bool Check) SendOneWayWhole(in FrameHeader header, ReadOnlySpan<byte> payload)
    {
        if (!Writer.TryHoldWhole(header, payload, out bool check))
        {
            return (false, SendOneWay(header, payload));
        }
        WakeIfChecked(check);
        return (true, check);
    }

    /// <summary>The data area's bytes (tests that compare what two ways of writing leave in it).</summary>
    public ReadOnlySpan<byte> Data => new(Ring.Data, Ring.Capacity);

    /// <summary>Polls until one frame was delivered (or a goodbye), sleeping on the ring when it is empty.</summary>
    public PollResult Receive(IFrameHandler handler)
    {
        var spinner = new IdleSpinner();
        while (true)
        {
            PollResult result = Reader.Poll(handler);
            if (result is PollResult.Frame or PollResult.Goodbye)
            {
                return result;
            }
            if (result == PollResult.Progress)
            {
                spinner.Reset();
                continue;
            }
            if (spinner.SpinOnce(Signal.Strategy))
            {
                continue;
            }
            int seq = Signal.ConsumerSeq;
            Signal.ArmConsumer();
            if (!Reader.HasData)
            {
                Signal.WaitConsumer(seq);
            }
            Signal.DisarmConsumer();
        }
    }

    /// <summary>The types of the records from <paramref name="from"/> up to the first unpublished one.</summary>
    public List<(long Position, RecordType Type, int Length)> Records(long from)
    {
        var records = new List<(long, RecordType, int)>();
        long position = from;
        while (true)
        {
            byte* record = Ring.Data + (position & (Ring.Capacity - 1));
            int length = Volatile.Read(ref *(int*)record);
            if (length == 0)
            {
                return records;
            }
            records.Add((position, (RecordType)(*(int*)(record + 4)), length));
            position += RingLayout.Align(length);
        }
    }

    public void Dispose() => NativeMemory.AlignedFree(_memory);
}
