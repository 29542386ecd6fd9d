using XCall.Marshal;

namespace XCall.Fuzz.Tests;

#pragma warning disable CS8631 // StringMarshaller (IMarshaller<string?>) as a key marshaller.
using StringIntDictionary = DictionaryMarshaller<string, StringMarshaller, int, UnmanagedMarshaller<int>>;
#pragma warning restore CS8631

/// <summary>
/// Target "marshal": the public <see cref="MarshalReader"/> and the generic marshallers. The first byte
/// picks how the message arrives (whole, or in chunks of 1 to 15 bytes through <see cref="IMarshalInput"/>);
/// then each byte picks the next read, until the message ends.
/// </summary>
public static class MarshalTarget
{
    private delegate void Read(ref MarshalReader reader);

    private static readonly Read[] s_reads =
    [
        (ref MarshalReader r) => r.ReadInt32(),
        (ref MarshalReader r) => r.Read<decimal>(),
        (ref MarshalReader r) => r.ReadBoolean(),
        (ref MarshalReader r) => r.ReadPresence(),
        (ref MarshalReader r) => r.ReadNullable<long>(),
        (ref MarshalReader r) => r.ReadString(),
        (ref MarshalReader r) => r.ReadArray<int>(),
        (ref MarshalReader r) => r.ReadArray<Guid>(),
        (ref MarshalReader r) => r.ReadList<short>(),
        (ref MarshalReader r) => r.ReadLength(minElementSize: 4),
        (ref MarshalReader r) => ArrayMarshaller<string?, StringMarshaller>.Read(ref r),
        (ref MarshalReader r) => ListMarshaller<int?, NullableMarshaller<int>>.Read(ref r),
        (ref MarshalReader r) => StringIntDictionary.Read(ref r),
        (ref MarshalReader r) => DictionaryMarshaller<int, UnmanagedMarshaller<int>, string?, StringMarshaller>.Read(ref r),
        (ref MarshalReader r) => HashSetMarshaller<long, UnmanagedMarshaller<long>>.Read(ref r),
        (ref MarshalReader r) => UnmanagedMemoryMarshaller<ushort>.Read(ref r),
        (ref MarshalReader r) => ImmutableArrayMarshaller<string?, StringMarshaller>.Read(ref r),
        (ref MarshalReader r) => UnmanagedImmutableArrayMarshaller<double>.Read(ref r),
        (ref MarshalReader r) => r.EnterObject(),
    ];

    public static void Run(ReadOnlySpan<byte> input)
    {
        if (input.IsEmpty)
        {
            return;
        }
        int chunk = input[0] & 15;
        byte[] message = input[1..].ToArray();
        try
        {
            if (chunk == 0)
            {
                var reader = new MarshalReader(message);
                ReadAll(ref reader);
            }
            else
            {
                var chunks = new Chunks(message, chunk);
                var reader = new MarshalReader(chunks.First, message.Length, chunks);
                ReadAll(ref reader);
            }
        }
        catch (XCallProtocolException)
        {
            FuzzTarget.CountRefusal();
        }
    }

    /// <summary>Seeds: the reads in order over a valid message of each, whole and chunked.</summary>
    public static IEnumerable<(string Name, byte[] Input)> Seeds()
    {
        var output = new System.Buffers.ArrayBufferWriter<byte>();
        var w = new MarshalWriter(output);
        w.WriteByte(0); w.WriteInt32(7);
        w.WriteByte(1); w.Write(12.5m);
        w.WriteByte(2); w.WriteBoolean(true);
        w.WriteByte(4); w.WriteNullable((long?)9);
        w.WriteByte(5); w.WriteString("héllo");
        w.WriteByte(6); w.WriteArray(new[] { 1, 2, 3 });
        w.WriteByte(8); w.WriteList(new List<short> { 4, 5 });
        w.WriteByte(10); ArrayMarshaller<string?, StringMarshaller>.Write(ref w, ["a", null]);
        w.WriteByte(12); StringIntDictionary.Write(ref w, new() { ["k"] = 1, ["l"] = 2 });
        w.WriteByte(14); HashSetMarshaller<long, UnmanagedMarshaller<long>>.Write(ref w, [1, 2, 3]);
        w.WriteByte(16); ImmutableArrayMarshaller<string?, StringMarshaller>.Write(ref w, ["x", "y"]);
        w.Flush();
        byte[] message = output.WrittenSpan.ToArray();
        yield return ("whole", [0, .. message]);
        yield return ("chunks-3", [3, .. message]);
    }

    private static void ReadAll(ref MarshalReader reader)
    {
        while (reader.Remaining > 0)
        {
            s_reads[reader.ReadByte() % s_reads.Length](ref reader);
        }
        reader.EnsureFullyConsumed();
    }

    /// <summary>A message handed out in chunks of a fixed size.</summary>
    private sealed class Chunks(byte[] message, int size) : IMarshalInput
    {
        private int _next = Math.Min(size, message.Length);

        public ReadOnlySpan<byte> First => message.AsSpan(0, _next);

        public ReadOnlySpan<byte> NextChunk()
        {
            int start = _next;
            _next = Math.Min(message.Length, start + size);
            return message.AsSpan(start, _next - start);
        }
    }
}
