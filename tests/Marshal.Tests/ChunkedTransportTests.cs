using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace XCall.Marshal.Tests;

/// <summary>Writing through buffer writers that hand out tiny spans, and reading through the chunked
/// constructor: values that straddle span and chunk boundaries must come back exactly.</summary>
public sealed class ChunkedTransportTests
{
    /// <summary>A mixed stream of random values of every kind, written by <see cref="WriteStream"/> and
    /// checked by <see cref="ReadStream"/>; the same seed gives the same stream.</summary>
    private static void WriteStream(ref MarshalWriter w, int seed, int count)
    {
        var random = new Random(seed);
        for (int i = 0; i < count; i++)
        {
            switch (random.Next(16))
            {
                case 0: w.WriteByte((byte)random.Next(256)); break;
                case 1: w.WriteInt32(random.Next(int.MinValue, int.MaxValue)); break;
                case 2: w.Write(random.NextInt64()); break;
                case 3: w.Write(Wire.RandomBits<double>(random)); break;
                case 4: w.Write((char)random.Next(0x10000)); break;
                case 5: w.WriteBoolean(random.Next(2) == 1); break;
                case 6: w.Write(Wire.RandomBits<Guid>(random)); break;
                case 7: w.Write(new decimal(random.Next(), random.Next(), random.Next(), random.Next(2) == 1, (byte)random.Next(29))); break;
                case 8: w.Write(MixedStruct.Random(random)); break;
                case 9: w.WriteString(RandomString(random)); break;
                case 10: w.WriteArray(RandomInts(random)); break;
                case 11: w.WriteNullable(random.Next(2) == 0 ? null : (short?)random.Next(short.MinValue, short.MaxValue)); break;
                case 12: w.Write(new DateTime(random.NextInt64(DateTime.MaxValue.Ticks), (DateTimeKind)random.Next(3))); break;
                case 13: StringListMarshaller.Write(ref w, RandomStrings(random)); break;
                case 14: w.WriteList(RandomInts(random)?.Select(x => (long)x).ToList()); break;
                default: w.WritePresence(random.Next(2) == 1); break;
            }
        }
    }

    private static bool ReadStream(ref MarshalReader r, int seed, int count)
    {
        var random = new Random(seed);
        for (int i = 0; i < count; i++)
        {
            switch (random.Next(16))
            {
                case 0: Assert.Equal((byte)random.Next(256), r.ReadByte()); break;
                case 1: Assert.Equal(random.Next(int.MinValue, int.MaxValue), r.ReadInt32()); break;
                case 2: Assert.Equal(random.NextInt64(), r.Read<long>()); break;
                case 3: Wire.AssertBitwiseEqual(Wire.RandomBits<double>(random), r.Read<double>()); break;
                case 4: Assert.Equal((char)random.Next(0x10000), r.Read<char>()); break;
                case 5: Assert.Equal(random.Next(2) == 1, r.ReadBoolean()); break;
                case 6: Assert.Equal(Wire.RandomBits<Guid>(random), r.Read<Guid>()); break;
                case 7: Wire.AssertBitwiseEqual(new decimal(random.Next(), random.Next(), random.Next(), random.Next(2) == 1, (byte)random.Next(29)), r.Read<decimal>()); break;
                case 8: Assert.Equal(MixedStruct.Random(random), r.Read<MixedStruct>()); break;
                case 9: Assert.Equal(RandomString(random), r.ReadString()); break;
                case 10: Assert.Equal(RandomInts(random), r.ReadArray<int>()); break;
                case 11: Assert.Equal(random.Next(2) == 0 ? null : (short?)random.Next(short.MinValue, short.MaxValue), r.ReadNullable<short>()); break;
                case 12: Wire.AssertBitwiseEqual(new DateTime(random.NextInt64(DateTime.MaxValue.Ticks), (DateTimeKind)random.Next(3)), r.Read<DateTime>()); break;
                case 13: Assert.Equal(RandomStrings(random), StringListMarshaller.Read(ref r)); break;
                case 14: Assert.Equal(RandomInts(random)?.Select(x => (long)x).ToList(), r.ReadList<long>()); break;
                default: Assert.Equal(random.Next(2) == 1, r.ReadPresence()); break;
            }
        }
        return true;
    }

    private abstract class StringListMarshaller : ListMarshaller<string?, StringMarshaller>;

    private static string? RandomString(Random random)
    {
        int length = random.Next(-1, 24);
        if (length < 0)
        {
            return null;
        }
        var chars = new char[length];
        for (int i = 0; i < length; i++)
        {
            chars[i] = (char)random.Next(0x10000);
        }
        return new string(chars);
    }

    private static int[]? RandomInts(Random random)
    {
        int length = random.Next(-1, 12);
        return length < 0 ? null : [.. Enumerable.Range(0, length).Select(_ => random.Next(int.MinValue, int.MaxValue))];
    }

    private static List<string?>? RandomStrings(Random random)
    {
        int length = random.Next(-1, 5);
        return length < 0 ? null : [.. Enumerable.Range(0, length).Select(_ => RandomString(random))];
    }

    [Fact]
    public void Values_straddling_span_and_chunk_boundaries_round_trip_for_every_span_size()
    {
        const int count = 400;
        for (int seed = 1; seed <= 8; seed++)
        {
            byte[] canonical = Wire.Encode((ref MarshalWriter w) => WriteStream(ref w, seed, count));
            Assert.True(Wire.Decode(canonical, (ref MarshalReader r) => ReadStream(ref r, seed, count)));
            for (int spanSize = 1; spanSize <= 16; spanSize++)
            {
                byte[] tiny = Wire.EncodeTiny((ref MarshalWriter w) => WriteStream(ref w, seed, count), spanSize);
                Wire.AssertSameBytes(canonical, tiny, $"seed {seed}, spans of {spanSize}");
                for (int maxChunk = 1; maxChunk <= 16; maxChunk += 5)
                {
                    int chunkSeed = seed * 1000 + spanSize * 16 + maxChunk;
                    Assert.True(Wire.DecodeChunked(tiny, (ref MarshalReader r) => ReadStream(ref r, seed, count), chunkSeed, maxChunk));
                }
            }
            byte[] randomSpans = Wire.EncodeTiny((ref MarshalWriter w) => WriteStream(ref w, seed, count), 16, new Random(seed));
            Wire.AssertSameBytes(canonical, randomSpans, "random spans");
        }
    }

    [Fact]
    public void Tiny_spans_are_committed_only_with_what_was_written()
    {
        var output = new TinySpanBufferWriter(3);
        var writer = new MarshalWriter(output);
        writer.Write(0x1122334455667788L); // 8 bytes: more than the span, so the writer asks with a size hint
        writer.WriteByte(0x99);
        writer.WriteString("ab");
        Assert.Equal(8 + 1 + 4 + 4, writer.BytesWritten);
        writer.Flush();
        Assert.Equal(
            [0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x99, 2, 0, 0, 0, (byte)'a', 0, (byte)'b', 0],
            output.ToArray());
        Assert.True(output.GetSpanCalls > 3);
        Assert.Equal(8, output.LargestSpanHandedOut);
    }

    [Fact]
    public void Buffer_writer_receives_the_last_span_only_on_Flush()
    {
        var output = new ArrayBufferWriter<byte>();
        var writer = new MarshalWriter(output);
        writer.WriteInt32(42);
        writer.WriteString("hello");
        Assert.Equal(0, output.WrittenCount);
        Assert.Equal(4 + 4 + 10, writer.BytesWritten);
        writer.Flush();
        Assert.Equal(18, output.WrittenCount);
        writer.Flush();
        Assert.Equal(18, output.WrittenCount);
        writer.WriteByte(7);
        writer.Flush();
        Assert.Equal(19, output.WrittenCount);
        Assert.Equal(19, writer.BytesWritten);
        Assert.Equal(7, output.WrittenSpan[^1]);
    }

    [Fact]
    public void Fixed_span_writer_out_of_room_throws_InvalidOperationException()
    {
        Assert.Throws<InvalidOperationException>(() => { var w = new MarshalWriter(new byte[3]); w.WriteInt32(1); });
        Assert.Throws<InvalidOperationException>(() => { var w = new MarshalWriter(new byte[7]); w.Write(1L); });
        Assert.Throws<InvalidOperationException>(() => { var w = new MarshalWriter(Span<byte>.Empty); w.WriteByte(1); });
        Assert.Throws<InvalidOperationException>(() => { var w = new MarshalWriter(new byte[9]); w.WriteString("abc"); });
        Assert.Throws<InvalidOperationException>(() => { var w = new MarshalWriter(new byte[3]); w.WriteString(""); });
        Assert.Throws<InvalidOperationException>(() => { var w = new MarshalWriter(new byte[11]); w.WriteArray(new[] { 1, 2 }); });
        Assert.Throws<InvalidOperationException>(() => { var w = new MarshalWriter(new byte[4]); w.WriteNullable<int>(1); });
        Assert.Throws<InvalidOperationException>(() => { var w = new MarshalWriter(new byte[5]); w.WriteBlock(new byte[6]); });
        Assert.Throws<InvalidOperationException>(() =>
        {
            var w = new MarshalWriter(new byte[100]);
            StringListMarshaller.Write(ref w, [.. Enumerable.Repeat("0123456789", 10)]);
        });
    }

    [Fact]
    public void Fixed_span_writer_filled_to_the_last_byte_succeeds()
    {
        var buffer = new byte[4 + 4 + 6 + 1 + 8];
        var w = new MarshalWriter(buffer);
        w.WriteInt32(-1);
        w.WriteString("abc");
        w.WriteBoolean(true);
        w.Write(2.5);
        Assert.Equal(buffer.Length, w.BytesWritten);
        Assert.Equal(buffer, w.WrittenSpan.ToArray());
        Assert.Equal(Wire.Encode((ref MarshalWriter x) => { x.WriteInt32(-1); x.WriteString("abc"); x.WriteBoolean(true); x.Write(2.5); }), buffer);
    }

    [Fact]
    public void Chunked_reader_ignores_bytes_beyond_the_total_length()
    {
        byte[] message = Wire.Encode((ref MarshalWriter w) => { w.WriteInt32(7); w.WriteString("xyz"); });

        // The first chunk holds the whole message and the start of the next one.
        byte[] ring = [.. message, 0xAA, 0xBB, 0xCC, 0xDD];
        var empty = new ChunkedInput([], 0, new Random(1), 1);
        var reader = new MarshalReader(ring, message.Length, empty);
        Assert.Equal(message.Length, reader.Remaining);
        Assert.Equal(7, reader.ReadInt32());
        Assert.Equal("xyz", reader.ReadString());
        reader.EnsureFullyConsumed();
        Assert.Throws<XCallProtocolException>(() =>
        {
            var r = new MarshalReader(ring, message.Length, new ChunkedInput([], 0, new Random(1), 1));
            r.ReadInt32();
            r.ReadString();
            r.ReadByte();
        });

        // The last chunk holds the end of the message and the start of the next one.
        for (int seed = 0; seed < 20; seed++)
        {
            var input = new ChunkedInput(message, 1, new Random(seed), 4, trailingGarbage: [0xAA, 0xBB, 0xCC, 0xDD]);
            var r = new MarshalReader(input.First, message.Length, input);
            Assert.Equal(7, r.ReadInt32());
            Assert.Equal("xyz", r.ReadString());
            r.EnsureFullyConsumed();
            Assert.Equal(0, r.Remaining);
        }

        // Bytes of the next message in the last chunk are not readable as part of this one.
        for (int seed = 0; seed < 20; seed++)
        {
            Assert.Throws<XCallProtocolException>(() =>
            {
                var input = new ChunkedInput(message, 1, new Random(seed), 4, trailingGarbage: [0xAA, 0xBB, 0xCC, 0xDD]);
                var r = new MarshalReader(input.First, message.Length, input);
                r.ReadInt32();
                r.ReadString();
                r.ReadByte();
            });
            Assert.Throws<XCallProtocolException>(() =>
            {
                var input = new ChunkedInput(message, 1, new Random(seed), 4, trailingGarbage: [0xAA, 0xBB, 0xCC, 0xDD]);
                var r = new MarshalReader(input.First, message.Length, input);
                r.ReadInt32();
                r.ReadBytesInPlace(message.Length - 4 + 1);
            });
        }
    }

    [Fact]
    public void Chunked_reader_whose_input_ends_early_raises_protocol_error()
    {
        byte[] message = Wire.Encode((ref MarshalWriter w) => { w.WriteInt32(7); w.WriteString("a longer string"); w.Write(1.5); });
        for (int cut = 0; cut < message.Length; cut++)
        {
            byte[] delivered = message[..cut];
            Assert.Throws<XCallProtocolException>(() =>
            {
                var input = new ChunkedInput(delivered, Math.Min(2, delivered.Length), new Random(cut), 3);
                var r = new MarshalReader(input.First, message.Length, input);
                r.ReadInt32();
                r.ReadString();
                r.Read<double>();
            });
        }
    }

    [Fact]
    public void Chunked_reader_asks_for_chunks_only_when_it_needs_them()
    {
        byte[] message = Wire.Encode((ref MarshalWriter w) => { w.WriteInt32(1); w.WriteInt32(2); w.WriteInt32(3); });
        var input = new ChunkedInput(message, 4, new Random(1), 4, minChunk: 4);
        var r = new MarshalReader(input.First, message.Length, input);
        Assert.Equal(12, r.Remaining);
        Assert.Equal(1, r.ReadInt32());
        Assert.Equal(0, input.Calls);
        Assert.Equal(8, r.Remaining);
        Assert.Equal(2, r.ReadInt32());
        Assert.Equal(1, input.Calls);
        Assert.Equal(3, r.ReadInt32());
        Assert.Equal(2, input.Calls);
        r.EnsureFullyConsumed();
        Assert.Equal(2, input.Calls);
    }

    [Fact]
    public void ReadBlock_and_ReadBytesInPlace_span_chunks()
    {
        byte[] message = [.. Enumerable.Range(0, 200).Select(i => (byte)i)];
        for (int seed = 0; seed < 30; seed++)
        {
            var input = new ChunkedInput(message, seed % 5, new Random(seed), 1 + seed % 9);
            var r = new MarshalReader(input.First, message.Length, input);
            var block = new byte[37];
            r.ReadBlock(block);
            Assert.Equal(message[..37], block);
            Assert.Equal(message[37..100], r.ReadBytesInPlace(63).ToArray());
            Assert.True(r.ReadBytesInPlace(0).IsEmpty);
            r.ReadBlock([]);
            Assert.Equal(message[100..199], r.ReadBytesInPlace(99).ToArray());
            Assert.Equal(1, r.Remaining);
            Assert.Throws<XCallProtocolException>(() =>
            {
                var again = new ChunkedInput(message, 0, new Random(seed), 7);
                var r2 = new MarshalReader(again.First, message.Length, again);
                r2.ReadBytesInPlace(201);
            });
            Assert.Equal(199, r.ReadByte());
            r.EnsureFullyConsumed();
        }

        // Contiguous: the bytes are returned in place.
        var whole = new MarshalReader(message);
        ReadOnlySpan<byte> inPlace = whole.ReadBytesInPlace(10);
        Assert.True(Unsafe.AreSame(ref MemoryMarshal.GetReference(inPlace), ref message[0]));
    }

    [Fact]
    public void Large_block_written_through_tiny_spans_reads_back_through_tiny_chunks()
    {
        var data = new byte[50_000];
        new Random(2).NextBytes(data);
        for (int size = 1; size <= 16; size += 3)
        {
            byte[] encoded = Wire.EncodeTiny((ref MarshalWriter w) => { w.WriteByte(1); w.WriteBlock(data); w.WriteByte(2); }, size);
            Assert.Equal(data.Length + 2, encoded.Length);
            byte[] back = Wire.DecodeChunked(encoded, (ref MarshalReader r) =>
            {
                Assert.Equal(1, r.ReadByte());
                var block = new byte[data.Length];
                r.ReadBlock(block);
                Assert.Equal(2, r.ReadByte());
                return block;
            }, seed: size, maxChunk: 17 - size);
            Wire.AssertSameBytes(data, back);
        }
    }
}
