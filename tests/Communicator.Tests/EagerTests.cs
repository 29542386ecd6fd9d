using System.Diagnostics;
using System.Runtime.InteropServices;
using XCall.Communicator.Eager;

namespace XCall.Communicator.Tests;

/// <summary>The eager path: small messages between ranks of one node written straight into the receiver's inbox.</summary>
public sealed class EagerTests
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(60);

    [Fact]
    public unsafe void A_ring_gives_back_its_records_in_order_across_the_wrap_and_refuses_what_does_not_fit()
    {
        byte* memory = (byte*)NativeMemory.AllocZeroed((nuint)EagerRing.Bytes);
        try
        {
            var ring = new EagerRing(memory);
            int written = 0;
            int read = 0;
            // 3000-byte records do not divide the capacity: the ring pads at its end and wraps several times.
            for (int round = 0; round < 200; round++)
            {
                while (ring.TryWrite(round, written, Payload(written, 3000)))
                {
                    written++;
                }
                Assert.True(written - read > 10, "a ring of 64 KiB holds more than ten 3000-byte records");
                for (int take = 0; take < 7 && read < written; take++, read++)
                {
                    Assert.True(ring.TryPeek(out long context, out int tag, out ReadOnlySpan<byte> payload, out long next));
                    Assert.Equal(read, tag);
                    Assert.True(context <= round);
                    Assert.True(payload.SequenceEqual(Payload(read, 3000)));
                    ring.Release(next);
                }
            }
            while (ring.TryPeek(out _, out int tag, out _, out long next))
            {
                Assert.Equal(read++, tag);
                ring.Release(next);
            }
            Assert.Equal(written, read);
            Assert.False(ring.HasData);
            Assert.False(ring.TryWrite(0, 0, new byte[EagerRing.MaxPayload + 1]));
        }
        finally
        {
            NativeMemory.Free(memory);
        }
    }

    [Fact]
    public unsafe void A_ring_read_while_another_thread_writes_gives_every_record_once_in_order_empty_ones_too()
    {
        // The reader polls the record's own mark, never the writer's tail: sizes from 0 bytes to the largest
        // payload, written by one thread while another reads, many times round the ring.
        const int Records = 20_000;
        byte* memory = (byte*)NativeMemory.AllocZeroed((nuint)EagerRing.Bytes);
        try
        {
            var ring = new EagerRing(memory);
            static int SizeOf(int i) => i % 97 == 0 ? EagerRing.MaxPayload : (i * 37) % 300;
            nint shared = (nint)memory;
            var writer = Task.Run(() =>
            {
                var ringOfWriter = new EagerRing((byte*)shared);
                for (int i = 0; i < Records; i++)
                {
                    byte[] payload = Payload(i, SizeOf(i));
                    var spin = new SpinWait();
                    while (!ringOfWriter.TryWrite(i * 3L, i, payload))
                    {
                        spin.SpinOnce(sleep1Threshold: -1);
                    }
                }
            });
            var deadline = Stopwatch.StartNew();
            for (int read = 0; read < Records;)
            {
                Assert.True(deadline.Elapsed < s_hang, $"record {read} never came");
                if (!ring.TryPeek(out long context, out int tag, out ReadOnlySpan<byte> payload, out long next))
                {
                    Assert.False(writer.IsFaulted);
                    continue;
                }
                Assert.Equal(read, tag);
                Assert.Equal(read * 3L, context);
                Assert.True(payload.SequenceEqual(Payload(read, SizeOf(read))), $"record {read}'s bytes");
                ring.Release(next);
                read++;
            }
            writer.GetAwaiter().GetResult();
            Assert.False(ring.HasData);
            Assert.True(ring.TryWrite(7, 8, []));
            Assert.True(ring.HasData);
            Assert.True(ring.TryPeek(out long lastContext, out int lastTag, out ReadOnlySpan<byte> empty, out _));
            Assert.Equal((7L, 8, 0), (lastContext, lastTag, empty.Length));
        }
        finally
        {
            NativeMemory.Free(memory);
        }
    }

    [Fact]
    public unsafe void A_claimed_lent_message_stays_claimed_apart_from_its_answer_and_the_records()
    {
        byte* memory = (byte*)NativeMemory.AllocZeroed((nuint)EagerRing.Bytes);
        try
        {
            var ring = new EagerRing(memory);
            Assert.False(ring.Claimed(1));
            ring.Claim(1);
            Assert.True(ring.Claimed(1));
            Assert.False(ring.Claimed(2)); // the next lent message is not claimed by its predecessor's claim
            Assert.Equal(LentAnswer.None, ring.AnswerTo(1)); // a claim is no answer: the sender keeps waiting
            ring.Answer(1, LentAnswer.Taken);
            Assert.Equal(LentAnswer.Taken, ring.AnswerTo(1));
            Assert.True(ring.Claimed(1));
            Assert.True(ring.TryWrite(5, 6, [7]));
            Assert.True(ring.TryPeek(out long context, out int tag, out ReadOnlySpan<byte> payload, out _));
            Assert.Equal((5L, 6, (byte)7), (context, tag, payload[0]));
            Assert.Equal(0L, ring.Delivered);
            Assert.False(ring.ReaderInCalls);
        }
        finally
        {
            NativeMemory.Free(memory);
        }
    }

    [Fact]
    public unsafe void A_corrupt_record_length_is_a_clear_error()
    {
        byte* memory = (byte*)NativeMemory.AllocZeroed((nuint)EagerRing.Bytes);
        try
        {
            var ring = new EagerRing(memory);
            Assert.True(ring.TryWrite(1, 2, [1, 2, 3]));
            *(int*)(memory + EagerRing.HeaderBytes) = EagerRing.Capacity; // the record's length, as a broken writer would leave it
            Assert.Throws<InvalidDataException>(() => ring.TryPeek(out _, out _, out _, out _));
        }
        finally
        {
            NativeMemory.Free(memory);
        }
    }

    [SkippableFact]
    public async Task Messages_of_one_source_and_tag_keep_their_order_when_a_full_inbox_sends_some_as_calls_and_large_ones_go_between()
    {
        SkipWithoutEagerPath();
        Communicator[] ranks = await InProcessTests.JoinAsync(2);
        try
        {
            const int Count = 3000;
            using var allSent = new ManualResetEventSlim();
            await InProcessTests.RunRanksAsync(ranks, c =>
            {
                if (c.Rank == 0)
                {
                    // Nothing is received until everything is sent: the inbox fills, and the rest goes as calls.
                    for (int i = 0; i < Count; i++)
                    {
                        c.Send(Payload(i, i % 100 == 99 ? 20_000 : 900), 1, 7);
                        c.Send(i, 1, 8);
                    }
                    allSent.Set();
                }
                else
                {
                    Assert.True(allSent.Wait(s_hang));
                    for (int i = 0; i < Count; i++)
                    {
                        Assert.Equal(i, c.Receive<int>(0, 8));
                        byte[] block = c.ReceiveArray<byte>(0, 7, out MessageStatus status);
                        Assert.True(block.AsSpan().SequenceEqual(Payload(i, i % 100 == 99 ? 20_000 : 900)), $"message {i} of tag 7");
                        Assert.Equal(0, status.Source);
                    }
                }
            });
            (long eager, long posted) = ranks[0].Messaging.SentTo(1);
            Assert.True(eager > 0, "some messages went through the inbox");
            Assert.True(posted > 0, "some messages went as calls while the inbox was full");
        }
        finally
        {
            await InProcessTests.LeaveAsync(ranks);
        }
    }

    [SkippableFact]
    public async Task A_receive_that_sleeps_on_its_sources_connection_still_gets_small_and_large_messages_in_order()
    {
        SkipWithoutEagerPath();
        Communicator[] ranks = await InProcessTests.JoinAsync(2);
        ranks[0].Messaging.LendsMessages = false; // large messages go as calls, as they do to a rank that cannot read this process
        try
        {
            await InProcessTests.RunRanksAsync(ranks, c =>
            {
                for (int i = 0; i < 60; i++)
                {
                    int length = i % 3 == 0 ? 40_000 : 40; // the large ones go as calls, which tells the receiver their connection
                    if (c.Rank == 0)
                    {
                        // A gap longer than the receiver's spinning and yielding: it goes to sleep each time.
                        Thread.Sleep(2);
                        c.Send(Payload(i, length), 1, 4);
                        Assert.Equal(i, c.Receive<int>(1, 5));
                    }
                    else
                    {
                        byte[] block = c.ReceiveArray<byte>(0, 4, out _);
                        Assert.True(block.AsSpan().SequenceEqual(Payload(i, length)), $"message {i}");
                        c.Send(i, 0, 5);
                    }
                }
            });
            Assert.True(ranks[1].Messaging.Inbox!.CallSleeps > 0, "the receiver slept on its source's connection");
        }
        finally
        {
            await InProcessTests.LeaveAsync(ranks);
        }
    }

    [SkippableFact]
    public async Task Asynchronous_receives_and_probes_complete_from_the_inbox_with_no_blocking_receive_polling()
    {
        SkipWithoutEagerPath();
        Communicator[] ranks = await InProcessTests.JoinAsync(3);
        try
        {
            var buffer = new int[4];
            Task<MessageStatus> pending = ranks[1].ReceiveAsync<int>(buffer, Communicator.AnySource, 5);
            Task<MessageStatus> probed = ranks[2].ProbeAsync(0, 6);
            ranks[0].Send(new[] { 1, 2, 3 }, 1, 5);
            ranks[0].Send(new[] { 4, 5 }, 2, 6);
            MessageStatus status = await pending.WaitAsync(s_hang);
            Assert.Equal((0, 5, 12), (status.Source, status.Tag, status.ByteCount));
            Assert.Equal([1, 2, 3, 0], buffer);
            MessageStatus probe = await probed.WaitAsync(s_hang);
            Assert.Equal((0, 6, 8), (probe.Source, probe.Tag, probe.ByteCount));
            Assert.Equal([4, 5], ranks[2].ReceiveArray<int>(0, 6, out _));
            Assert.True(ranks[0].Messaging.SentTo(1).Eager + ranks[0].Messaging.SentTo(2).Eager > 0, "the messages went through the inboxes");

            ranks[0].Send(77, 2, 3);
            var watch = Stopwatch.StartNew();
            MessageStatus found;
            while (!ranks[2].TryProbe(0, 3, out found))
            {
                Assert.True(watch.Elapsed < s_hang, "TryProbe never saw the message");
                Thread.Yield();
            }
            Assert.Equal(4, found.ByteCount);
            Assert.Equal(77, ranks[2].Receive<int>(0, 3));
        }
        finally
        {
            await InProcessTests.LeaveAsync(ranks);
        }
    }

    [SkippableFact]
    public async Task An_inbox_file_is_deleted_once_every_peer_mapped_it_and_stale_ones_are_swept()
    {
        SkipWithoutEagerPath();
        string stale = Path.Combine("/dev/shm", $"xcall-comm-{DeadProcessId()}-stale");
        await File.WriteAllBytesAsync(stale, new byte[16]);
        Communicator[] ranks = await InProcessTests.JoinAsync(3);
        try
        {
            EagerInbox[] inboxes = [.. ranks.Select(c => c.Messaging.Inbox!)];
            Assert.All(inboxes, Assert.NotNull);
            Assert.False(File.Exists(stale), "a joining rank deletes the inbox of a process that no longer runs");
            Assert.All(inboxes, inbox => Assert.True(File.Exists(inbox.Path)));
            await InProcessTests.RunRanksAsync(ranks, c =>
            {
                for (int to = 0; to < c.Size; to++)
                {
                    if (to != c.Rank)
                    {
                        c.Send(c.Rank, to, 1);
                    }
                }
                for (int from = 0; from < c.Size; from++)
                {
                    if (from != c.Rank)
                    {
                        Assert.Equal(from, c.Receive<int>(from, 1));
                    }
                }
            });
            Assert.All(inboxes, inbox => Assert.False(File.Exists(inbox.Path), "every peer mapped it, so its file is gone"));
            await InProcessTests.RunRanksAsync(ranks, c => Assert.Equal(3, c.Allreduce(1, ReduceOperation.Sum<int>()))); // the mappings still carry messages
        }
        finally
        {
            await InProcessTests.LeaveAsync(ranks);
            File.Delete(stale);
        }
    }

    [SkippableFact]
    public async Task A_blocking_receive_takes_a_waiting_small_message_with_no_allocation_and_keeps_the_matching_order()
    {
        SkipWithoutEagerPath();
        Communicator[] ranks = await InProcessTests.JoinAsync(2);
        try
        {
            const int Count = 200;
            var buffer = new int[2];
            // Warm up: the first receives compile the path.
            ranks[0].Send(new[] { -1, -1 }, 1, 1);
            ranks[1].Receive<int>(buffer, 0, 1);

            // Every message is in the receiver's inbox before its receive: it is copied from the ring, no request made.
            for (int i = 0; i < Count; i++)
            {
                ranks[0].Send(new[] { i, -i }, 1, 1);
            }
            long allocated = GC.GetAllocatedBytesForCurrentThread();
            int received = 0;
            for (int i = 0; i < Count; i++)
            {
                MessageStatus status = ranks[1].Receive<int>(buffer, 0, 1);
                received += buffer[0] == i && buffer[1] == -i && status is { Source: 0, Tag: 1, ByteCount: 8 } ? 1 : 0;
            }
            long used = GC.GetAllocatedBytesForCurrentThread() - allocated;
            Assert.Equal(Count, received);
            Assert.Equal(0, used);

            // Interleaved tags: the receives of tag 3 move the tag 2 records to the mailbox, whose receives take them in order.
            for (int i = 0; i < Count; i++)
            {
                ranks[0].Send(i, 1, 2);
                ranks[0].Send(1000 + i, 1, 3);
            }
            for (int i = 0; i < Count; i++)
            {
                Assert.Equal(1000 + i, ranks[1].Receive<int>(0, 3));
            }
            allocated = GC.GetAllocatedBytesForCurrentThread();
            for (int i = 0; i < Count; i++)
            {
                received += ranks[1].Receive<int>(0, 2) == i ? 1 : 0;
            }
            used = GC.GetAllocatedBytesForCurrentThread() - allocated;
            Assert.Equal(2 * Count, received);
            Assert.Equal(0, used);

            // A receive posted earlier takes the first message, though a blocking receive came to the inbox first.
            var first = new int[1];
            Task<MessageStatus> posted = ranks[1].ReceiveAsync<int>(first, 0, 4);
            ranks[0].Send(1, 1, 4);
            ranks[0].Send(2, 1, 4);
            Assert.Equal(2, ranks[1].Receive<int>(0, 4));
            await posted.WaitAsync(s_hang);
            Assert.Equal(1, first[0]);

            // Too long a message fails the receive that takes it, and the next one is received.
            ranks[0].Send(new[] { 1, 2, 3 }, 1, 5);
            ranks[0].Send(9, 1, 5);
            MessageTruncatedException error = Assert.Throws<MessageTruncatedException>(() => ranks[1].Receive<int>(buffer, 0, 5));
            Assert.Equal(12, error.MessageBytes);
            Assert.Equal(9, ranks[1].Receive<int>(0, 5));
        }
        finally
        {
            await InProcessTests.LeaveAsync(ranks);
        }
    }

    private static void SkipWithoutEagerPath() =>
        Skip.IfNot(OperatingSystem.IsLinux() && Directory.Exists("/dev/shm"), "no /dev/shm here: the eager path is off, and the communicator sends every message as a call");

    private static int DeadProcessId()
    {
        using var process = Process.Start(new ProcessStartInfo("true") { UseShellExecute = false })!;
        process.WaitForExit();
        return process.Id;
    }

    private static byte[] Payload(int seed, int length)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }
}
