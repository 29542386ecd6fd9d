using XCall.Marshal;
using XCall.Transport.Shm.Ring;
using XCall.Transport.Shm.Tests.Support;

namespace XCall.Transport.Shm.Tests;

public sealed unsafe class RingTests(ITestOutputHelper output)
{
    private static FrameHeader Header(int i) => new(FrameKind.Call, (ulong)i, (ulong)(1000 + i), (uint)(7 * i));

    [Fact]
    public void Every_record_starts_on_a_cache_line_and_a_writer_held_at_the_limit_overwrites_nothing_unread()
    {
        // Every payload length from 0 to 200 bytes, so records end at every offset within a line; the reader is
        // slower than the writer, which therefore keeps writing right up to its limit a lap ahead of the reader: a
        // terminator past the consumer's position + capacity would overwrite an unread record and break a frame.
        const int Frames = 20_000;
        using var ring = new NativeRing(4096, ShmIdleStrategy.Blocking);
        var handler = new RecordingHandler();
        var positions = new List<long>();
        var writer = Task.Factory.StartNew(() =>
        {
            for (int i = 0; i < Frames; i++)
            {
                ring.Send(Header(i), Patterns.Make(i % 201, i));
            }
        }, TaskCreationOptions.LongRunning);
        var reader = Task.Factory.StartNew(() =>
        {
            for (int i = 0; i < Frames; i++)
            {
                if (i % 64 == 0)
                {
                    positions.Add(Volatile.Read(ref *ring.Ring.ConsumerPosition));
                    Thread.SpinWait(2000); // behind the writer
                }
                Assert.Equal(PollResult.Frame, ring.Receive(handler));
            }
        }, TaskCreationOptions.LongRunning);
        // Bounded: a broken ring may leave either side waiting for ever, which fails here instead of hanging the run.
        Assert.True(Task.WaitAll([writer, reader], TimeSpan.FromSeconds(60)), "the writer and the reader did not finish");
        for (int i = 0; i < Frames; i++)
        {
            Assert.Equal(Header(i), handler.Frames[i].Header);
            Assert.Equal(Patterns.Make(i % 201, i), handler.Frames[i].Payload);
        }
        Assert.All(positions, p => Assert.Equal(0, p % RingLayout.Alignment));
        Assert.Equal(0, ring.Writer.Tail % RingLayout.Alignment);
        Assert.True(ring.Writer.Tail > 100 * 4096, "the writer went round the ring many times");
    }

    [Fact]
    public void A_goodbye_record_leaves_its_terminator_where_the_reader_looks_next()
    {
        using var ring = new NativeRing(4096);
        ring.Send(Header(1), Patterns.Make(5, 1));
        WriteGoodbyeAndReadIt(ring, new RecordingHandler(), framesBefore: 1);
    }

    /// <summary>
    /// Writes a goodbye at the tail and checks that it ends on the next line with its terminator there, where the
    /// reader looks next; then the reader reads <paramref name="framesBefore"/> frames, the goodbye, and nothing more.
    /// </summary>
    private static void WriteGoodbyeAndReadIt(NativeRing ring, RecordingHandler handler, int framesBefore)
    {
        long next = ring.Writer.Tail + RingLayout.Align(RingLayout.RecordHeaderLength);
        Assert.True(ring.Writer.TryWriteControl(RecordType.Goodbye));
        Assert.Equal(next, ring.Writer.Tail);
        Assert.Equal(0, *(int*)(ring.Ring.Data + (next & (ring.Ring.Capacity - 1))));
        for (int i = 0; i < framesBefore; i++)
        {
            Assert.Equal(PollResult.Frame, ring.Reader.Poll(handler));
        }
        Assert.Equal(PollResult.Goodbye, ring.Reader.Poll(handler));
        Assert.Equal(PollResult.Empty, ring.Reader.Poll(handler));
    }

    [Fact]
    public void A_goodbye_on_the_last_line_of_a_lap_puts_its_terminator_at_the_start_of_the_next()
    {
        using var ring = new NativeRing(4096);
        var handler = new RecordingHandler();
        FillLapUntil(ring, handler, left: RingLayout.Alignment);
        WriteGoodbyeAndReadIt(ring, handler, framesBefore: 0); // ends at the lap's end, its terminator at offset 0
    }

    /// <summary>Sends one-line frames (read at once) until <paramref name="left"/> bytes are left before the lap's end.</summary>
    private static void FillLapUntil(NativeRing ring, RecordingHandler handler, int left)
    {
        int oneLine = RingLayout.Alignment - RingLayout.FirstPayloadOffset; // a frame of one record of one line
        for (int i = 0; ring.Writer.Tail < ring.Ring.Capacity - left; i++)
        {
            ring.Send(Header(i), Patterns.Make(oneLine, i));
            Assert.Equal(PollResult.Frame, ring.Reader.Poll(handler));
        }
        Assert.Equal(ring.Ring.Capacity - left, ring.Writer.Tail);
        Assert.NotEqual(0, *(int*)ring.Ring.Data); // the first frame's length, a lap ago: a terminator at 0 must go over it
    }

    [Theory]
    [InlineData(25)] // the shortest payload whose record, aligned, reaches the lap's end
    [InlineData(88)] // the longest: the record fills the last two lines exactly
    public void A_frame_that_ends_on_the_laps_end_leaves_its_terminator_at_the_next_laps_start(int payload)
    {
        using var ring = new NativeRing(4096);
        var handler = new RecordingHandler();
        FillLapUntil(ring, handler, left: 2 * RingLayout.Alignment);
        int before = handler.Frames.Count;

        ring.Send(Header(500), Patterns.Make(payload, 500));
        Assert.Equal(ring.Ring.Capacity, ring.Writer.Tail); // one record, no padding, no chunk in the next lap
        Assert.Equal(0, *(int*)ring.Ring.Data);
        Assert.Equal(PollResult.Frame, ring.Reader.Poll(handler));
        Assert.Equal(PollResult.Empty, ring.Reader.Poll(handler));

        // The next lap starts where the terminator is.
        ring.Send(Header(501), Patterns.Make(300, 501));
        Assert.Equal(PollResult.Frame, ring.Reader.Poll(handler));
        Assert.Equal(PollResult.Empty, ring.Reader.Poll(handler));
        Assert.Equal([Header(500), Header(501)], handler.Frames.Skip(before).Select(f => f.Header));
        Assert.Equal(Patterns.Make(payload, 500), handler.Frames[before].Payload);
        Assert.Equal(Patterns.Make(300, 501), handler.Frames[before + 1].Payload);
    }

    [Fact]
    public void A_one_way_frame_written_in_one_step_may_end_on_the_laps_end_and_is_declined_one_line_later()
    {
        using var ring = new NativeRing(1 << 15); // a held batch takes records of at most capacity / 128 bytes
        Assert.True(RingLayout.FirstPayloadOffset + RingWriter.MaxWholePayload <= (1 << 15) / (4 * RingWriter.MaxHeldFrames));
        var handler = new RecordingHandler();
        var oneWay = new FrameHeader(FrameKind.OneWay, 0, 1, 9);
        FillLapUntil(ring, handler, left: 2 * RingLayout.Alignment);
        RefreshLimit(ring);

        // Two lines left: the first record's reserve fits, and the largest one-step payload ends on the lap's end.
        Assert.True(ring.Writer.TryHoldWhole(oneWay, Patterns.Make(RingWriter.MaxWholePayload, 9), out _));
        Assert.Equal(ring.Ring.Capacity, ring.Writer.Tail);
        Assert.Equal(0, *(int*)ring.Ring.Data);
        ring.Writer.PublishHeld();
        Assert.Equal(PollResult.Frame, ring.Reader.Poll(handler));
        Assert.Equal(PollResult.Empty, ring.Reader.Poll(handler));
        Assert.Equal(oneWay, handler.Frames[^1].Header);
        Assert.Equal(Patterns.Make(RingWriter.MaxWholePayload, 9), handler.Frames[^1].Payload);

        // One line left before the next lap's end, with room behind the reader to spare: the reserve does not fit
        // before the lap's end, so the one step declines (BeginFrame would pad) and writes nothing.
        FillLapUntil(ring, handler, left: 2 * RingLayout.Alignment - ring.Ring.Capacity);
        RefreshLimit(ring);
        FillLapUntil(ring, handler, left: RingLayout.Alignment - ring.Ring.Capacity);
        byte[] before = ring.Data.ToArray();
        Assert.False(ring.Writer.TryHoldWhole(oneWay, Patterns.Make(4, 10), out _));
        Assert.Equal(2 * ring.Ring.Capacity - RingLayout.Alignment, ring.Writer.Tail);
        Assert.True(before.AsSpan().SequenceEqual(ring.Data), "a declined frame changed the ring");
    }

    /// <summary>
    /// Has the writer read the reader's position again (the one step never waits for it, so it declines a frame past
    /// the position the writer last read): a frame begun with two lines left before the lap's end, then aborted, which
    /// leaves no trace.
    /// </summary>
    private static void RefreshLimit(NativeRing ring)
    {
        long tail = ring.Writer.Tail;
        ring.Writer.BeginFrame(Header(0));
        ring.Writer.Abort();
        Assert.Equal(tail, ring.Writer.Tail);
    }

    [Fact]
    public void Frames_wrap_around_the_ring_with_padding_and_split_records_and_arrive_intact()
    {
        using var ring = new NativeRing(4096);
        var handler = new RecordingHandler();
        var seen = new List<RecordType>();
        int frames = 0;
        for (int i = 0; i < 200; i++)
        {
            int length = i * 97 % 1500;
            long before = ring.Writer.Tail;
            ring.Send(Header(i), Patterns.Make(length, i));
            seen.AddRange(ring.Records(before).Select(r => r.Type));
            Assert.Equal(PollResult.Frame, ring.Reader.Poll(handler));
            Assert.Equal(PollResult.Empty, ring.Reader.Poll(handler));
            frames++;
        }

        Assert.Equal(frames, handler.Frames.Count);
        for (int i = 0; i < frames; i++)
        {
            Assert.Equal(Header(i), handler.Frames[i].Header);
            Assert.Equal(Patterns.Make(i * 97 % 1500, i), handler.Frames[i].Payload);
        }
        Assert.Contains(RecordType.Padding, seen);    // a frame that could not start before the end
        Assert.Contains(RecordType.FrameChunk, seen); // a frame continued at the start of the next lap
        Assert.True(ring.Writer.Tail > 20 * 4096, "the writer went round the ring many times");
    }

    [Fact]
    public void A_writer_and_a_reader_on_two_threads_pass_frames_of_every_size_in_order()
    {
        using var ring = new NativeRing(4096);
        const int Count = 20_000;
        var writer = new Thread(() =>
        {
            var random = new Random(1);
            for (int i = 0; i < Count; i++)
            {
                // Mostly small, sometimes larger than the ring (streamed).
                int length = random.Next(10) == 0 ? random.Next(4096, 12_000) : random.Next(0, 600);
                ring.Send(Header(i), Patterns.Make(length, i));
            }
        });
        writer.Start();

        var check = new SequenceCheckingHandler(1);
        for (int i = 0; i < Count; i++)
        {
            Assert.Equal(PollResult.Frame, ring.Receive(check));
        }
        writer.Join();
        Assert.Equal(Count, check.Received);
        Assert.Null(check.Failure);
    }

    [Fact]
    public void A_frame_larger_than_the_ring_after_padding_wakes_a_sleeping_reader()
    {
        // The first frame leaves the tail one alignment unit (64 bytes) before the end of the data area, too close for the next
        // frame's start: that one begins with a padding record. It is larger than the ring, so it can only
        // stream once the reader consumed the padding, and the reader is asleep by then.
        const int Capacity = 4096;
        using var ring = new NativeRing(Capacity, ShmIdleStrategy.Blocking);
        var handler = new RecordingHandler();
        var reader = Task.Factory.StartNew(() =>
        {
            Assert.Equal(PollResult.Frame, ring.Receive(handler));
            Assert.Equal(PollResult.Frame, ring.Receive(handler));
        }, TaskCreationOptions.LongRunning);
        const int Left = RingLayout.Alignment; // less than a frame's first record needs: the next frame pads the lap
        int first = Capacity - Left - RingLayout.FirstPayloadOffset;
        ring.Send(Header(1), Patterns.Make(first, 1));
        Assert.Equal(Capacity - Left, ring.Writer.Tail);
        var asleep = Task.Run(() => SpinWait.SpinUntil(() => ReaderAsleepAt(ring, Capacity - Left)));
        Assert.True(asleep.Wait(TimeSpan.FromSeconds(30)), "the reader did not go to sleep");

        var send = Task.Factory.StartNew(() => ring.Send(Header(2), Patterns.Make(3 * Capacity, 2)), TaskCreationOptions.LongRunning);
        // Unless the padding wakes the reader, the writer waits for room the sleeping reader never makes: both hang.
        Assert.True(Task.WaitAll([send, reader], TimeSpan.FromSeconds(30)), "the writer and the reader waited for each other");
        Assert.Equal(Patterns.Make(3 * Capacity, 2), handler.Frames[1].Payload);
    }

    [Theory]
    [InlineData(FrameKind.Reply, 0, false)]
    [InlineData(FrameKind.Error, 0, false)]
    [InlineData(FrameKind.Call, FrameFlags.Nested, false)]
    [InlineData(FrameKind.Call, 0, true)]
    [InlineData(FrameKind.OneWay, 0, true)]
    public void The_padding_that_ends_a_lap_is_woken_for_as_the_frame_after_it(FrameKind kind, ushort flags, bool wakesReceiveThread)
    {
        // The consumer's callers marked the ring while its receive thread sleeps: a frame they poll for (a reply, an
        // error, a call nested in one of their calls) needs no wake-up, and neither does the padding before it, since
        // whoever reads the frame reads the padding first. Any other frame wakes the receive thread, and so does its
        // padding.
        const int Capacity = 4096;
        using var ring = new NativeRing(Capacity);
        var handler = new RecordingHandler();
        ring.Send(Header(1), Patterns.Make(Capacity - RingLayout.Alignment - RingLayout.FirstPayloadOffset, 1)); // the next frame pads the lap
        Assert.Equal(PollResult.Frame, ring.Reader.Poll(handler));
        ring.Signal.MarkCallerPolls();
        int consumerSeq = ring.Signal.ConsumerSeq;
        int leaderSeq = ring.Signal.LeaderSeq;
        long tail = ring.Writer.Tail;

        var header = new FrameHeader(kind, 2, 0, 7, flags);
        ring.Writer.BeginFrame(header);

        Assert.Equal(RecordType.Padding, Assert.Single(ring.Records(tail)).Type);
        Assert.Equal(wakesReceiveThread ? consumerSeq + 1 : consumerSeq, ring.Signal.ConsumerSeq);
        Assert.Equal(leaderSeq, ring.Signal.LeaderSeq);
        Assert.Equal(!wakesReceiveThread, ring.Signal.IsMarkedCallerPolls);
        ring.Writer.Commit();
        Assert.Equal(PollResult.Frame, ring.Reader.Poll(handler));
        Assert.Equal(header, handler.Frames[1].Header);
    }

    /// <summary>The reader consumed everything before <paramref name="position"/> and sleeps on the ring.</summary>
    private static bool ReaderAsleepAt(NativeRing ring, long position) =>
        Volatile.Read(ref *ring.Ring.ConsumerPosition) == position && Volatile.Read(ref *ring.Ring.ConsumerSleeping) != 0;

    [Fact]
    public void A_256_MiB_frame_streams_through_a_1_MiB_ring_with_every_byte_intact()
    {
        const long Length = 256L << 20;
        using var ring = new NativeRing(1 << 20);
        int spaceWaits = 0;
        ring.Signal.SpaceWaitObserved = () => Interlocked.Increment(ref spaceWaits);
        var header = new FrameHeader(FrameKind.Reply, 42, 7, 99);
        var writer = new Thread(() =>
        {
            ring.Writer.BeginFrame(header);
            long written = 0;
            while (written < Length)
            {
                Span<byte> span = ring.Writer.GetSpan(1);
                int n = (int)Math.Min(span.Length, Length - written);
                Patterns.Fill(span[..n], written, 5);
                ring.Writer.Advance(n);
                written += n;
            }
            ring.Writer.Commit();
            ring.Signal.WakeConsumerIfSleeping();
        });
        writer.Start();

        var handler = new StreamCheckingHandler(Length, 5);
        Assert.Equal(PollResult.Frame, ring.Receive(handler));
        writer.Join();

        Assert.Equal(header, handler.Header);
        Assert.Equal(Length, handler.Checked);
        Assert.Null(handler.Failure);
        Assert.True(spaceWaits > 0, "the writer waited for the reader (the frame cannot fit)");
        output.WriteLine($"256 MiB through a 1 MiB ring; the writer spent {spaceWaits} idle turns waiting for room");
    }

    [Fact]
    public void A_frame_larger_than_the_free_space_but_smaller_than_the_ring_is_read_in_place_across_the_wrap()
    {
        using var ring = new NativeRing(1 << 16);
        var handler = new RecordingHandler();
        // Move the positions to the middle of the data area, then send a frame of 3/4 of the ring.
        ring.Send(Header(0), Patterns.Make(30_000, 0));
        Assert.Equal(PollResult.Frame, ring.Reader.Poll(handler));
        long before = ring.Writer.Tail;
        ring.Send(Header(1), Patterns.Make(48_000, 1));
        var records = ring.Records(before);
        Assert.Equal(RecordType.FrameStart, records[0].Type);
        Assert.Contains(records, r => r.Type == RecordType.FrameChunk);
        var watching = new PositionWatchingHandler(ring.Ring);
        Assert.Equal(PollResult.Frame, ring.Reader.Poll(watching));
        Assert.Equal(Patterns.Make(48_000, 1), watching.Payload);

        // Spans a handler got from the frame (a ReadOnlySpan parameter read in place) point into the ring: no
        // record of the frame is released to the writer before the handler returns; then all of it is.
        Assert.Equal([before], watching.ConsumerWhileReading.Distinct());
        Assert.True(*ring.Ring.ConsumerPosition > before + 48_000, "the whole frame is released once handled");
        Assert.Equal(PollResult.Empty, ring.Reader.Poll(handler));
    }

    [Fact]
    public void A_block_that_would_straddle_the_wrap_starts_after_it_and_is_read_in_place()
    {
        using var ring = new NativeRing(4096);
        var handler = new RecordingHandler();
        ring.Send(Header(0), Patterns.Make(3300, 0)); // the next frame starts about 3.3 KiB into the 4 KiB lap
        Assert.Equal(PollResult.Frame, ring.Reader.Poll(handler));
        int[] values = [.. Enumerable.Range(0, 250).Select(i => i * 31)];
        long start = ring.Writer.Tail;

        ring.Writer.BeginFrame(Header(1));
        var writer = new MarshalWriter(ring.Writer);
        writer.WriteSpan<int>(values);
        writer.Flush();
        ring.Writer.Commit();

        Assert.Contains(ring.Records(start), r => r.Type == RecordType.Padding);
        var reading = new SpanReadingHandler();
        Assert.Equal(PollResult.Frame, ring.Reader.Poll(reading));
        Assert.Equal(values, reading.Values);
        Assert.True(reading.InPlace, "the 1000-byte block was contiguous in the ring and read in place");
    }

    [Fact]
    public void A_full_ring_makes_the_writer_wait_for_a_slow_reader_and_nothing_is_lost()
    {
        using var ring = new NativeRing(4096);
        using var waiting = new ManualResetEventSlim();
        ring.Signal.SpaceWaitObserved = waiting.Set;
        const int Count = 60;
        var writer = Task.Run(() =>
        {
            for (int i = 0; i < Count; i++)
            {
                ring.Send(Header(i), Patterns.Make(500, i));
            }
        });

        Assert.True(waiting.Wait(TimeSpan.FromSeconds(60)), "the writer should block on the full ring");
        Assert.False(writer.IsCompleted);
        int inRing = ring.Records(ring.Reader.Position).Count(r => r.Type == RecordType.FrameStart);
        Assert.InRange(inRing, 1, 4096 / 540);

        var handler = new RecordingHandler();
        for (int i = 0; i < Count; i++)
        {
            Assert.Equal(PollResult.Frame, ring.Receive(handler));
            Thread.SpinWait(20_000); // a slow consumer
        }
        writer.Wait();
        for (int i = 0; i < Count; i++)
        {
            Assert.Equal(Header(i), handler.Frames[i].Header);
            Assert.Equal(Patterns.Make(500, i), handler.Frames[i].Payload);
        }
    }

    [Fact]
    public void An_aborted_frame_that_was_not_published_leaves_no_trace()
    {
        using var ring = new NativeRing(4096);
        var handler = new RecordingHandler();
        ring.Send(Header(0), Patterns.Make(3000, 0));
        Assert.Equal(PollResult.Frame, ring.Reader.Poll(handler));

        // This one would wrap (first record, padding or chunk): abort it half-way.
        ring.Writer.BeginFrame(Header(1));
        Span<byte> span = ring.Writer.GetSpan(2000);
        span[..2000].Fill(0xEE);
        ring.Writer.Advance(2000);
        Assert.False(ring.Writer.Abort());
        Assert.Equal(PollResult.Empty, ring.Reader.Poll(handler));

        ring.Send(Header(2), Patterns.Make(100, 2));
        Assert.Equal(PollResult.Frame, ring.Reader.Poll(handler));
        Assert.Equal(PollResult.Empty, ring.Reader.Poll(handler));
        Assert.Equal([Header(0), Header(2)], handler.Frames.Select(f => f.Header));
        Assert.Equal(Patterns.Make(100, 2), handler.Frames[1].Payload);
    }

    [Fact]
    public void An_aborted_streamed_frame_is_dropped_by_the_reader_and_the_next_frame_arrives()
    {
        using var ring = new NativeRing(4096);
        var writer = Task.Run(() =>
        {
            ring.Writer.BeginFrame(Header(1));
            for (int written = 0; written < 20_000;)
            {
                Span<byte> span = ring.Writer.GetSpan(1);
                int n = Math.Min(span.Length, 20_000 - written);
                span[..n].Fill(0xEE);
                ring.Writer.Advance(n);
                written += n;
            }
            Assert.True(ring.Writer.IsStreaming);
            Assert.True(ring.Writer.Abort());
            ring.Signal.WakeConsumerIfSleeping();
            ring.Send(Header(2), Patterns.Make(300, 2));
        });
        var handler = new RecordingHandler();
        Assert.Equal(PollResult.Frame, ring.Receive(handler));
        writer.Wait();
        var frame = Assert.Single(handler.Frames);
        Assert.Equal(Header(2), frame.Header);
        Assert.Equal(Patterns.Make(300, 2), frame.Payload);
    }

    [Theory]
    [InlineData(4, (int)RecordType.FrameStart, "length 4")]
    [InlineData(9000, (int)RecordType.FrameStart, "does not fit")]
    [InlineData(16, 77, "unknown record type 77")]
    [InlineData(16, (int)RecordType.FrameChunk, "outside a streamed frame")]
    [InlineData(16, (int)RecordType.FrameStart, "shorter than its header")]
    public void A_malformed_record_is_a_protocol_error(int length, int type, string expected)
    {
        using var ring = new NativeRing(4096);
        *(int*)(ring.Ring.Data + 4) = type;
        Interlocked.Exchange(ref *(int*)ring.Ring.Data, length);
        var ex = Assert.Throws<XCallProtocolException>(() => ring.Reader.Poll(new RecordingHandler()));
        Assert.Contains(expected, ex.Message);
    }

    [Theory]
    [InlineData(0, 4096)] // a whole lap: the reader would find the same record again at the next lap, forever
    [InlineData(0, 16)] // not up to the end of the lap
    [InlineData(3968, 48)] // starts mid-lap (on a record's line), ends before the lap end
    public void A_padding_record_that_does_not_end_its_lap_is_a_protocol_error(int at, int length)
    {
        using var ring = new NativeRing(4096);
        *ring.Ring.ConsumerPosition = at;
        var reader = new RingReader(ring.Ring, ring.Signal, Array.MaxLength);
        *(int*)(ring.Ring.Data + at + 4) = (int)RecordType.Padding;
        Interlocked.Exchange(ref *(int*)(ring.Ring.Data + at), length);
        // On a thread of its own, so a reader that loops fails the test instead of hanging it.
        Task<Exception?> poll = Task.Factory.StartNew<Exception?>(() => Record.Exception(() => reader.Poll(new RecordingHandler())), TaskCreationOptions.LongRunning);
        Assert.True(poll.Wait(TimeSpan.FromSeconds(30)), "the reader did not return from a padding record");
        var ex = Assert.IsType<XCallProtocolException>(poll.Result);
        Assert.Contains("padding", ex.Message);
    }

    [Fact]
    public void An_in_place_frame_whose_chunks_do_not_add_up_is_a_protocol_error()
    {
        using var ring = new NativeRing(4096);
        byte* first = ring.Ring.Data;
        FrameHeaderCodec.Write(first + 8, Header(1));
        *(int*)(first + RingLayout.TotalLengthOffset) = 100; // claims 100 bytes, holds 8, and nothing follows
        *(int*)(first + 4) = (int)RecordType.FrameStart;
        *(int*)(first + RingLayout.Align(RingLayout.FirstPayloadOffset + 8)) = 0;
        Interlocked.Exchange(ref *(int*)first, RingLayout.FirstPayloadOffset + 8);
        var handler = new ReadingAllHandler();
        Assert.Throws<XCallProtocolException>(() => ring.Reader.Poll(handler));
    }

    [Fact]
    public void The_portable_wake_path_delivers_frames_between_threads()
    {
        using var ring = new NativeRing(4096, ShmIdleStrategy.Blocking, portable: true);
        Assert.False(ring.Signal.UsesFutex);
        const int Count = 2000;
        var writer = new Thread(() =>
        {
            for (int i = 0; i < Count; i++)
            {
                ring.Send(Header(i), Patterns.Make(i % 5000, i));
            }
        });
        writer.Start();
        var check = new SequenceCheckingHandler(5000);
        for (int i = 0; i < Count; i++)
        {
            Assert.Equal(PollResult.Frame, ring.Receive(check));
        }
        writer.Join();
        Assert.Null(check.Failure);
    }

    /// <summary>Checks frame i has header i and the pattern of its length.</summary>
    private sealed class SequenceCheckingHandler(int modulo) : IFrameHandler
    {
        public int Received { get; private set; }

        public string? Failure { get; private set; }

        public MarshalLimits Limits => MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref MarshalReader payload)
        {
            int i = Received++;
            byte[] bytes = new byte[payload.Remaining];
            payload.ReadBlock(bytes);
            if (Failure is null && (header != Header(i) || Patterns.FirstMismatch(bytes, 0, i) >= 0))
            {
                Failure = $"frame {i}: header {header}, {bytes.Length} bytes (modulo {modulo})";
            }
        }

        public void OnClosed(Exception? error)
        {
        }
    }

    /// <summary>Reads a huge payload in 64 KiB pieces and checks every byte against the pattern.</summary>
    private sealed class StreamCheckingHandler(long expectedLength, int seed) : IFrameHandler
    {
        public FrameHeader Header { get; private set; }

        public long Checked { get; private set; }

        public string? Failure { get; private set; }

        public MarshalLimits Limits => MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref MarshalReader payload)
        {
            Header = header;
            if (payload.Remaining != expectedLength)
            {
                Failure = $"payload of {payload.Remaining} bytes";
                return;
            }
            byte[] buffer = new byte[1 << 16];
            while (payload.Remaining > 0)
            {
                int n = (int)Math.Min(buffer.Length, payload.Remaining);
                payload.ReadBlock(buffer.AsSpan(0, n));
                int bad = Patterns.FirstMismatch(buffer.AsSpan(0, n), Checked, seed);
                if (bad >= 0)
                {
                    Failure ??= $"byte {Checked + bad} differs";
                }
                Checked += n;
            }
        }

        public void OnClosed(Exception? error)
        {
        }
    }

    /// <summary>Reads a payload in 1000-byte pieces, noting the consumer position the writer sees after each.</summary>
    private sealed class PositionWatchingHandler(ShmRing ring) : IFrameHandler
    {
        public List<long> ConsumerWhileReading { get; } = [];

        public byte[] Payload { get; private set; } = [];

        public MarshalLimits Limits => MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref MarshalReader payload)
        {
            Payload = new byte[payload.Remaining];
            for (int read = 0; read < Payload.Length; read += 1000)
            {
                payload.ReadBlock(Payload.AsSpan(read, Math.Min(1000, Payload.Length - read)));
                ConsumerWhileReading.Add(Volatile.Read(ref *ring.ConsumerPosition));
            }
        }

        public void OnClosed(Exception? error)
        {
        }
    }

    /// <summary>Reads one span of ints with <see cref="MarshalReader.ReadSpanInPlace{T}"/>.</summary>
    private sealed class SpanReadingHandler : IFrameHandler
    {
        public int[]? Values { get; private set; }

        public bool InPlace { get; private set; }

        public MarshalLimits Limits => MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref MarshalReader payload)
        {
            int[]? rented = null;
            Values = payload.ReadSpanInPlace(ref rented).ToArray();
            InPlace = rented is null;
            payload.EnsureFullyConsumed();
        }

        public void OnClosed(Exception? error)
        {
        }
    }

    private sealed class ReadingAllHandler : IFrameHandler
    {
        public MarshalLimits Limits => MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref MarshalReader payload)
        {
            byte[] all = new byte[payload.Remaining];
            payload.ReadBlock(all);
        }

        public void OnClosed(Exception? error)
        {
        }
    }
}
