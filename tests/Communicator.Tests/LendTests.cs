using XCall.Communicator.Eager;

namespace XCall.Communicator.Tests;

/// <summary>Large messages between ranks of one node, lent: the receiver copies them straight from the sender's memory.</summary>
public sealed class LendTests
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(60);

    [Fact]
    public void A_lent_message_record_reads_back_and_a_corrupt_one_is_a_clear_error()
    {
        var lent = new LentMessage(Tag: 7, Pid: 1234, Address: 0xdead_beef_0000, Length: 1 << 20, Number: 42);
        var record = new byte[LentMessage.Bytes];
        lent.Write(record);
        Assert.Equal(lent, LentMessage.Read(record));
        Assert.Throws<InvalidDataException>(() => LentMessage.Read(record.AsSpan(1)));
        record[19] = 0x80; // a negative length
        Assert.Throws<InvalidDataException>(() => LentMessage.Read(record));
    }

    [SkippableFact]
    public async Task Large_messages_are_lent_and_land_whether_their_receive_waits_comes_later_or_crosses_a_send()
    {
        Skip.IfNot(OperatingSystem.IsLinux() && Directory.Exists("/dev/shm"), "no /dev/shm here: the eager path is off, and large messages go as calls");
        Communicator[] ranks = await InProcessTests.JoinAsync(2);
        try
        {
            byte[] Block(int seed) => [.. Enumerable.Range(0, 100_000 + seed).Select(i => (byte)(i * 31 + seed))];
            await InProcessTests.RunRanksAsync(ranks, c =>
            {
                int peer = 1 - c.Rank;
                if (c.Rank == 1)
                {
                    // 1: the receive waits before the message comes (taken as the inbox is read).
                    var first = new byte[200_000];
                    Task<MessageStatus> waiting = c.ReceiveAsync<byte>(first, 0, 1);
                    c.Barrier();
                    MessageStatus status = waiting.WaitAsync(s_hang).GetAwaiter().GetResult();
                    Assert.Equal((0, 1, Block(1).Length), (status.Source, status.Tag, status.ByteCount));
                    Assert.True(first.AsSpan(0, status.ByteCount).SequenceEqual(Block(1)));
                    // 2: no receive waits while the sender waits for its answer (it nudges, and this rank keeps a copy).
                    c.Barrier();
                    Assert.Equal(Block(2).Length, c.Probe(0, 2).ByteCount);
                    Assert.True(c.ReceiveArray<byte>(0, 2, out _).AsSpan().SequenceEqual(Block(2)));
                    // 4: a receive too small for the message fails; its sender goes on.
                    Assert.Throws<MessageTruncatedException>(() => c.Receive<byte>(new byte[1000], 0, 4));
                }
                else
                {
                    c.Barrier();
                    c.Send(Block(1), 1, 1);
                    c.Send(Block(2), 1, 2);
                    c.Barrier();
                    c.Send(Block(4), 1, 4);
                }
                // 3: both ranks send before they receive: each takes the other's message while it waits for its own answer.
                c.Send(Block(3 + c.Rank), peer, 3);
                Assert.True(c.ReceiveArray<byte>(peer, 3, out _).AsSpan().SequenceEqual(Block(3 + peer)), "the crossed message");
                // 5: the ring allreduce's blocks are lent too, and its sum is right.
                double[] values = [.. Enumerable.Range(0, 50_000).Select(i => (double)(i + c.Rank))];
                var sum = new double[values.Length];
                c.Allreduce(values, sum, ReduceOperation.Sum<double>());
                Assert.All(Enumerable.Range(0, sum.Length).Where(i => i % 997 == 0), i => Assert.Equal(2.0 * i + 1, sum[i]));
            });
            Assert.True(ranks[0].Messaging.LentTo(1) >= 4, "rank 0 lent its large messages");
            Assert.True(ranks[1].Messaging.LentTo(0) >= 1, "rank 1 lent its large messages");
            // The crossed sends of 3 wait for each other's answers until one nudges the other, which then takes a copy;
            // a receive that claimed a lent message (started copying it) is never nudged, but this one did not.
            Assert.True(ranks[0].Messaging.Nudges + ranks[1].Messaging.Nudges >= 1, "a lender nudged its receiver");
        }
        finally
        {
            await InProcessTests.LeaveAsync(ranks);
        }
    }
}
