using System.Diagnostics;
using XCall.Marshal;
using XCall.Transport.Shm.Ring;
using XCall.Transport.Shm.Tests.Support;

namespace XCall.Transport.Shm.Tests;

/// <summary>One-way frames written in held batches (RingWriter's design notes): published whole, or taken by the reader.</summary>
public sealed unsafe class HeldBatchTests
{
    private static FrameHeader OneWay(int i) => new(FrameKind.OneWay, 0, 1, (uint)i);

    private static byte[] Payload(int i) => Patterns.Make(4 + i % 40, i);

    [Fact]
    public void Held_one_way_frames_stay_unread_until_the_next_frame_publishes_them_all_in_order()
    {
        using var ring = new NativeRing(1 << 16);
        var handler = new RecordingHandler();
        for (int i = 0; i < 5; i++)
        {
            ring.SendOneWay(OneWay(i), Payload(i));
        }
        Assert.True(ring.Writer.HoldsBatch);
        Assert.Equal(PollResult.Held, ring.Reader.Poll(handler)); // the head is held: the reader leaves it to the writer
        Assert.Empty(handler.Frames);

        ring.Send(new FrameHeader(FrameKind.Call, 9, 1, 99), Patterns.Make(16, 9)); // any other frame publishes the batch

        Assert.False(ring.Writer.HoldsBatch);
        for (int i = 0; i < 6; i++)
        {
            Assert.Equal(PollResult.Frame, ring.Reader.Poll(handler));
        }
        Assert.Equal(PollResult.Empty, ring.Reader.Poll(handler));
        Assert.Equal([.. Enumerable.Range(0, 5).Select(OneWay), new FrameHeader(FrameKind.Call, 9, 1, 99)], handler.Frames.Select(f => f.Header));
        for (int i = 0; i < 5; i++)
        {
            Assert.Equal(Payload(i), handler.Frames[i].Payload);
        }
        Assert.Equal(0, ring.Reader.HeldClaims);
    }

    [Fact]
    public void A_held_batch_is_published_when_it_reaches_its_most_frames()
    {
        using var ring = new NativeRing(1 << 16);
        var handler = new RecordingHandler();
        for (int i = 0; i < RingWriter.MaxHeldFrames - 1; i++)
        {
            ring.SendOneWay(OneWay(i), Payload(i));
        }
        Assert.True(ring.Writer.HoldsBatch);
        Assert.True(ring.SendOneWay(OneWay(RingWriter.MaxHeldFrames - 1), Payload(RingWriter.MaxHeldFrames - 1)));
        Assert.False(ring.Writer.HoldsBatch);
        for (int i = 0; i < RingWriter.MaxHeldFrames; i++)
        {
            Assert.Equal(PollResult.Frame, ring.Reader.Poll(handler));
            Assert.Equal(OneWay(i), handler.Frames[i].Header);
        }
        Assert.Equal(PollResult.Empty, ring.Reader.Poll(handler));
        Assert.Equal(0, ring.Reader.HeldClaims);
    }

    [Fact]
    public void A_lone_held_frame_is_taken_by_the_reader_and_the_writer_then_publishes_the_next_one_at_once()
    {
        using var ring = new NativeRing(1 << 16);
        var handler = new RecordingHandler();
        Assert.True(ring.SendOneWay(OneWay(0), Payload(0))); // opens a batch: its head gets a wake-up check
        ring.SendOneWay(OneWay(1), Payload(1));
        Assert.True(ring.Writer.HoldsBatch);

        // Nothing follows: the reader takes the held head once it has waited HeldClaimDelay for it.
        var clock = Stopwatch.StartNew();
        PollResult result;
        while ((result = ring.Reader.Poll(handler)) == PollResult.Held)
        {
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(30), "the reader never took the held frame");
        }
        Assert.Equal(PollResult.Frame, result);
        Assert.True(clock.Elapsed >= RingReader.HeldClaimDelay);
        Assert.Equal(PollResult.Frame, ring.Reader.Poll(handler));
        Assert.Equal(1, ring.Reader.HeldClaims);
        Assert.Equal(PollResult.Empty, ring.Reader.Poll(handler));

        // The writer sees the claim with its next frame: the batch is over and that frame is out now (wake-up check due).
        Assert.True(ring.SendOneWay(OneWay(2), Payload(2)));
        Assert.False(ring.Writer.HoldsBatch);
        Assert.Equal(PollResult.Frame, ring.Reader.Poll(handler));
        Assert.Equal([OneWay(0), OneWay(1), OneWay(2)], handler.Frames.Select(f => f.Header));
    }

    [Fact]
    public void A_sleeping_reader_gets_a_one_way_frame_published_and_woken_for_at_once()
    {
        using var ring = new NativeRing(1 << 16);
        int seq = ring.Signal.ConsumerSeq;
        ring.Signal.ArmConsumer(); // the receive thread sleeps on the ring
        ring.SendOneWay(OneWay(0), Payload(0));
        Assert.False(ring.Writer.HoldsBatch);
        Assert.Equal(seq + 1, ring.Signal.ConsumerSeq);
        var handler = new RecordingHandler();
        Assert.Equal(PollResult.Frame, ring.Reader.Poll(handler));
        Assert.Equal(0, ring.Reader.HeldClaims);
    }

    [Fact]
    public void A_one_way_frame_written_in_one_step_leaves_the_ring_as_one_begun_copied_and_committed()
    {
        // Two rings fed the same frames, one through BeginFrame/GetSpan/Commit(hold), the other in one step where it can:
        // over three laps (padding at each lap's end, batches published full and by the next frame), every byte of the
        // data area, the tail, the published producer position and the held batch match.
        using var begun = new NativeRing(1 << 15);
        using var whole = new NativeRing(1 << 15);
        var handler = new RecordingHandler();
        int wholeCount = 0;
        for (int i = 0; i < 1200; i++)
        {
            byte[] payload = Patterns.Make(i % 70, i); // up to 69 bytes: past MaxWholePayload the one step declines
            bool check = begun.SendOneWay(OneWay(i), payload);
            (bool taken, bool wholeCheck) = whole.SendOneWayWhole(OneWay(i), payload);
            wholeCount += taken ? 1 : 0;
            Assert.Equal(check, wholeCheck);
            Assert.False(taken && payload.Length > RingWriter.MaxWholePayload);
            Assert.Equal(begun.Writer.Tail, whole.Writer.Tail);
            Assert.Equal(*begun.Ring.ProducerPosition, *whole.Ring.ProducerPosition);
            Assert.Equal(begun.Writer.HoldsBatch, whole.Writer.HoldsBatch);
            Assert.True(begun.Data.SequenceEqual(whole.Data), $"the data areas differ after frame {i}");
            if (i % 40 == 39)
            {
                // Both readers take what was published so far, so the writers find room again and lap.
                begun.Send(new FrameHeader(FrameKind.Call, (ulong)i, 1, 1), []);
                whole.Send(new FrameHeader(FrameKind.Call, (ulong)i, 1, 1), []);
                while (begun.Reader.Poll(handler) != PollResult.Empty)
                {
                }
                while (whole.Reader.Poll(handler) != PollResult.Empty)
                {
                }
            }
        }
        // The frames of up to MaxWholePayload bytes (1,115 of them) took the one step but for a few near each lap's end.
        Assert.True(wholeCount >= 1000, $"only {wholeCount} frames took the one step");
        Assert.True(whole.Writer.Tail > 2 * (1 << 15), "the frames did not go round the ring twice");
    }

    [Fact]
    public void The_one_step_declines_a_frame_that_would_wait_or_not_fit_and_writes_nothing()
    {
        using var ring = new NativeRing(1 << 15);
        Assert.False(ring.Writer.TryHoldWhole(OneWay(0), new byte[RingWriter.MaxWholePayload + 1], out _));
        Assert.Equal(0, ring.Writer.Tail);

        // Fill the ring (nothing read): the one step declines the frame that would wait for room.
        int i = 0;
        while (ring.Writer.TryHoldWhole(OneWay(i), Payload(i), out _))
        {
            i++;
        }
        long tail = ring.Writer.Tail;
        Assert.True(tail > (1 << 15) - 200, $"the ring was not filled: declined at {tail}");
        byte[] before = ring.Data.ToArray();
        Assert.False(ring.Writer.TryHoldWhole(OneWay(i), Payload(i), out _));
        Assert.Equal(tail, ring.Writer.Tail);
        Assert.True(before.AsSpan().SequenceEqual(ring.Data), "a declined frame changed the ring");
    }

    [Fact]
    public void A_ring_filled_with_held_batches_delivers_every_frame()
    {
        // The writer keeps coming back for room only the reader can free from frames it holds or held.
        using var ring = new NativeRing(1 << 14);
        var handler = new ReadingHandler();
        var reader = Task.Factory.StartNew(() =>
        {
            while (handler.Count < 400)
            {
                ring.Receive(handler);
            }
        }, TaskCreationOptions.LongRunning);
        for (int i = 0; i < 400; i++)
        {
            ring.SendOneWay(OneWay(i), Patterns.Make(24, i));
        }
        ring.Send(new FrameHeader(FrameKind.Call, 1, 1, 1), []); // publishes whatever is still held
        Assert.True(reader.Wait(TimeSpan.FromSeconds(30)), "the reader did not get every frame");
        Assert.Null(handler.Failure);
    }

    [Fact]
    public void Held_batches_pass_between_two_threads_in_order_whether_published_taken_or_woken_for()
    {
        using var ring = new NativeRing(1 << 14, ShmIdleStrategy.Blocking);
        const int Count = 100_000;
        var writer = new Thread(() =>
        {
            var random = new Random(3);
            for (int i = 0; i < Count; i++)
            {
                if (random.Next(50) == 0)
                {
                    ring.Send(new FrameHeader(FrameKind.Call, (ulong)i + 1, 1, (uint)i), Payload(i));
                }
                else
                {
                    ring.SendOneWay(OneWay(i), Payload(i));
                }
                if (random.Next(2000) == 0)
                {
                    Thread.Yield(); // lets the reader catch up with a batch and sleep, or take a held head
                }
            }
        });
        writer.Start();
        var handler = new ReadingHandler();
        while (handler.Count < Count && handler.Failure is null)
        {
            Assert.Equal(PollResult.Frame, ring.Receive(handler));
        }
        writer.Join();
        Assert.Null(handler.Failure);
        Assert.Equal(Count, handler.Count);
    }

    [Fact]
    public void After_the_reader_took_a_held_head_its_next_sleep_ends_by_itself()
    {
        // A frame the writer adds while the reader takes the head may get no wake-up check (RingWriter's design notes):
        // the sleep after a claim is bounded, so the reader looks again without being woken.
        using var ring = new NativeRing(1 << 16, ShmIdleStrategy.Blocking);
        var handler = new RecordingHandler();
        ring.SendOneWay(OneWay(0), Payload(0));
        var clock = Stopwatch.StartNew();
        while (ring.Reader.Poll(handler) == PollResult.Held)
        {
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(30), "the reader never took the held frame");
        }
        Assert.Equal(1, ring.Reader.HeldClaims);
        int seq = ring.Signal.ConsumerSeq;
        ring.Signal.ArmConsumer();
        Assert.True(Task.Run(() => ring.Signal.WaitConsumer(seq)).Wait(TimeSpan.FromSeconds(30)), "the sleep after a claim was not bounded");
        Assert.Equal(seq, ring.Signal.ConsumerSeq); // nobody woke it
    }

    [Fact]
    public void Bursts_of_held_frames_that_nothing_follows_all_reach_a_sleeping_reader_in_order()
    {
        // Each burst ends the writer's sending until the reader has it all: the last held head is always the reader's to
        // take, and frames added while it takes one may be seen only after its bounded sleep.
        using var ring = new NativeRing(1 << 14, ShmIdleStrategy.Blocking);
        const int Bursts = 1500;
        var random = new Random(5);
        int[] ends = new int[Bursts];
        for (int b = 0, total = 0; b < Bursts; b++)
        {
            total += 1 + random.Next(RingWriter.MaxHeldFrames + 8);
            ends[b] = total;
        }
        var handler = new ReadingHandler();
        using var received = new SemaphoreSlim(0);
        var reader = new Thread(() =>
        {
            int b = 0;
            while (b < Bursts && handler.Failure is null)
            {
                ring.Receive(handler);
                if (handler.Count == ends[b])
                {
                    b++;
                    received.Release();
                }
            }
        });
        reader.Start();
        for (int b = 0, i = 0; b < Bursts; b++)
        {
            for (; i < ends[b]; i++)
            {
                ring.SendOneWay(OneWay(i), Payload(i));
            }
            Assert.True(received.Wait(TimeSpan.FromSeconds(30)), $"burst {b} did not arrive whole ({handler.Count} of {ends[b]} frames)");
        }
        reader.Join();
        Assert.Null(handler.Failure);
        Assert.Equal(ends[^1], handler.Count);
        Assert.True(ring.Reader.HeldClaims > 0, "the reader took no held head");
    }

    [Fact]
    public void A_held_record_that_is_not_a_frame_start_is_a_protocol_error_once_taken()
    {
        using var ring = new NativeRing(4096);
        *(int*)(ring.Ring.Data + 4) = (int)RecordType.Padding;
        Interlocked.Exchange(ref *(int*)ring.Ring.Data, -64);
        var handler = new RecordingHandler();
        var clock = Stopwatch.StartNew();
        XCallProtocolException? error = null;
        while (error is null && clock.Elapsed < TimeSpan.FromSeconds(30))
        {
            error = Record.Exception(() => Assert.Equal(PollResult.Held, ring.Reader.Poll(handler))) as XCallProtocolException;
        }
        Assert.NotNull(error);
        Assert.Contains("held record of type", error.Message);
    }

    /// <summary>Checks that frame i carries header i and its payload, whatever its kind.</summary>
    private sealed class ReadingHandler : IFrameHandler
    {
        public int Count { get; private set; }

        public string? Failure { get; private set; }

        public MarshalLimits Limits => MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref MarshalReader payload)
        {
            byte[] copy = new byte[payload.Remaining];
            payload.ReadBlock(copy);
            int i = Count++;
            if (header.MethodId != (uint)i || !(copy.AsSpan().SequenceEqual(Payload(i)) || copy.AsSpan().SequenceEqual(Patterns.Make(24, i)) || copy.Length == 0))
            {
                Failure ??= $"frame {i}: method {header.MethodId}, {copy.Length} bytes";
            }
        }

        public void OnClosed(Exception? error)
        {
        }
    }
}
