using System.Buffers.Binary;

namespace XCall.Communicator.Eager;

/// <summary>
/// A large message a sender on this node lends rather than writes (the payload of an <see cref="EagerRing.LendTag"/>
/// record): where its bytes are in the sender's memory, which the receiver copies straight into the matching
/// receive's buffer with one <c>process_vm_readv</c>, then answers (<see cref="EagerRing.Answer"/>).
/// </summary>
/// <param name="Tag">The message's tag.</param>
/// <param name="Pid">The sender's process id.</param>
/// <param name="Address">The bytes' address in the sender's process (pinned until the answer).</param>
/// <param name="Length">The message's length in bytes.</param>
/// <param name="Number">The sender's count of messages lent to this receiver, this one included.</param>
internal readonly record struct LentMessage(int Tag, int Pid, ulong Address, int Length, long Number)
{
    public const int Bytes = 32;

    public void Write(Span<byte> record)
    {
        BinaryPrimitives.WriteInt32LittleEndian(record, Tag);
        BinaryPrimitives.WriteInt32LittleEndian(record[4..], Pid);
        BinaryPrimitives.WriteUInt64LittleEndian(record[8..], Address);
        BinaryPrimitives.WriteInt64LittleEndian(record[16..], Length);
        BinaryPrimitives.WriteInt64LittleEndian(record[24..], Number);
    }

    /// <exception cref="InvalidDataException">The record is not a lent message's.</exception>
    public static LentMessage Read(ReadOnlySpan<byte> record)
    {
        long length = record.Length == Bytes ? BinaryPrimitives.ReadInt64LittleEndian(record[16..]) : -1;
        int tag = record.Length == Bytes ? BinaryPrimitives.ReadInt32LittleEndian(record) : -1;
        if ((ulong)length > int.MaxValue || tag < 0)
        {
            throw new InvalidDataException($"A lent-message record of the eager ring holds {record.Length} bytes, tag {tag}, length {length}: the ring is corrupt.");
        }
        return new LentMessage(tag, BinaryPrimitives.ReadInt32LittleEndian(record[4..]), BinaryPrimitives.ReadUInt64LittleEndian(record[8..]), (int)length, BinaryPrimitives.ReadInt64LittleEndian(record[24..]));
    }
}

/// <summary>The receiver's answer to a <see cref="LentMessage"/>.</summary>
internal enum LentAnswer
{
    /// <summary>Not answered yet.</summary>
    None = 0,

    /// <summary>Copied out (into a receive's buffer, or into an array the receiver holds): the sender may reuse its bytes.</summary>
    Taken = 1,

    /// <summary>Not read: this receiver cannot read the sender's memory; the sender sends the message another way.</summary>
    Refused = 2,

    /// <summary>Reading it failed: the sender reports an error.</summary>
    Failed = 3,
}
