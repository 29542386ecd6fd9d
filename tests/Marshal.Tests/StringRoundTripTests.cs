using System.Runtime.InteropServices;

namespace XCall.Marshal.Tests;

public sealed class StringRoundTripTests
{
    private static byte[] AssertRoundTrips(string? value, int[]? spanSizes = null, int chunkedReads = 4)
    {
        byte[] bytes = Wire.AssertRoundTrip(value, (ref MarshalWriter w, string? v) => w.WriteString(v), (ref MarshalReader r) => r.ReadString(),
            (e, a) => Assert.Equal(e, a), spanSizes, chunkedReads);
        Wire.AssertSameBytes(bytes, Wire.RoundTrip<string?, StringMarshaller>(value, spanSizes, chunkedReads), "StringMarshaller");
        return bytes;
    }

    /// <summary>The expected encoding: UTF-16 length, then the code units little-endian.</summary>
    private static byte[] Expected(string value) =>
        [.. BitConverter.GetBytes(value.Length), .. MemoryMarshal.AsBytes(value.AsSpan()).ToArray()];

    [Fact]
    public void String_null_and_empty_are_distinct()
    {
        byte[] nullBytes = AssertRoundTrips(null);
        byte[] emptyBytes = AssertRoundTrips(string.Empty);
        Assert.Equal([0xFF, 0xFF, 0xFF, 0xFF], nullBytes);
        Assert.Equal([0x00, 0x00, 0x00, 0x00], emptyBytes);
        Assert.Null(Wire.Decode(nullBytes, (ref MarshalReader r) => r.ReadString()));
        Assert.Same(string.Empty, Wire.Decode(emptyBytes, (ref MarshalReader r) => r.ReadString()));
    }

    [Fact]
    public void Ascii_string_is_written_as_its_utf16_length_and_code_units()
    {
        byte[] bytes = AssertRoundTrips("Hi!");
        Assert.Equal([3, 0, 0, 0, (byte)'H', 0, (byte)'i', 0, (byte)'!', 0], bytes);
        string printable = new([.. Enumerable.Range(0, 128).Select(i => (char)i)]);
        Assert.Equal(Expected(printable), AssertRoundTrips(printable));
    }

    [Fact]
    public void Strings_of_every_short_length_are_written_exactly()
    {
        // 0 to 20 code units cover each way a short string is copied (none, one unit, 4-byte and 8-byte
        // moves that overlap, and the block copy), each at the start of a buffer and after an odd offset.
        for (int length = 0; length <= 20; length++)
        {
            string value = new([.. Enumerable.Range(0, length).Select(i => (char)(0x4100 + (i * 7)))]);
            Assert.Equal(Expected(value), AssertRoundTrips(value));
            byte[] shifted = Wire.Encode((ref MarshalWriter w) =>
            {
                w.WriteByte(0xEE);
                w.WriteString(value);
                w.WriteByte(0xDD);
            });
            Assert.Equal([0xEE, .. Expected(value), 0xDD], shifted);
        }
    }

    [Fact]
    public void Non_bmp_characters_round_trip_as_surrogate_pairs()
    {
        const string value = "a😀b𝄞\U0010FFFF";
        byte[] bytes = AssertRoundTrips(value);
        Assert.Equal(value.Length, BitConverter.ToInt32(bytes));
        Assert.Equal(8, value.Length);
        Assert.Equal(Expected(value), bytes);
        string back = Wire.Decode(bytes, (ref MarshalReader r) => r.ReadString())!;
        Assert.Equal([0x61, 0x1F600, 0x62, 0x1D11E, 0x10FFFF], back.EnumerateRunes().Select(r => r.Value));
    }

    [Fact]
    public void Lone_surrogates_round_trip_unchanged()
    {
        foreach (string value in new[] { "\uD800", "\uDC00", "x\uD83Dy", "\uDE00\uD83D", "end\uDBFF", "\uDFFFstart", "\uFFFE\uFFFF" })
        {
            AssertRoundTrips(value);
            string back = Wire.Decode(Wire.Encode((ref MarshalWriter w) => w.WriteString(value)), (ref MarshalReader r) => r.ReadString())!;
            Assert.Equal(MemoryMarshal.AsBytes(value.AsSpan()).ToArray(), MemoryMarshal.AsBytes(back.AsSpan()).ToArray());
            Assert.DoesNotContain('\uFFFD', back);
        }
    }

    [Fact]
    public void Strings_with_embedded_nul_characters_keep_them()
    {
        AssertRoundTrips("\0");
        AssertRoundTrips("a\0b\0\0");
        Assert.Equal(5, Wire.Decode(Wire.Encode((ref MarshalWriter w) => w.WriteString("a\0b\0\0")), (ref MarshalReader r) => r.ReadString())!.Length);
    }

    [Fact]
    public void String_of_one_million_random_code_units_round_trips()
    {
        var random = new Random(1_000_000);
        char[] chars = new char[1_000_000];
        random.NextBytes(MemoryMarshal.AsBytes(chars.AsSpan()));
        string value = new(chars);
        byte[] bytes = AssertRoundTrips(value, [5], chunkedReads: 1);
        Assert.Equal(4 + 2_000_000, bytes.Length);
        Assert.Equal(Expected(value), bytes);
        // Also through chunks that are large but never hold the whole string.
        Assert.Equal(value, Wire.DecodeChunked(bytes, (ref MarshalReader r) => r.ReadString(), seed: 9, maxChunk: 65_536));
    }

    [Fact]
    public void Random_strings_round_trip()
    {
        var random = new Random(77);
        for (int i = 0; i < 500; i++)
        {
            int length = random.Next(0, i % 10 == 0 ? 300 : 20);
            var chars = new char[length];
            for (int j = 0; j < length; j++)
            {
                chars[j] = random.Next(4) switch
                {
                    0 => (char)random.Next(0x20, 0x7F),
                    1 => (char)random.Next(0xD800, 0xE000),
                    2 => (char)random.Next(0x80, 0x800),
                    _ => (char)random.Next(0, 0x10000),
                };
            }
            AssertRoundTrips(new string(chars), [1 + i % 16], chunkedReads: 2);
        }
    }

    [Fact]
    public void Several_strings_in_a_row_keep_their_boundaries()
    {
        string?[] values = ["", null, "a", "", "😀", null, "xyz"];
        WriteAction write = (ref MarshalWriter w) =>
        {
            foreach (string? v in values)
            {
                w.WriteString(v);
            }
        };
        ReadFunc<string?[]> read = (ref MarshalReader r) =>
        {
            var result = new string?[values.Length];
            for (int i = 0; i < result.Length; i++)
            {
                result[i] = r.ReadString();
            }
            return result;
        };
        byte[] bytes = Wire.Encode(write);
        Assert.Equal(values, Wire.Decode(bytes, read));
        for (int seed = 0; seed < 20; seed++)
        {
            Assert.Equal(values, Wire.DecodeChunked(Wire.EncodeTiny(write, 1 + seed % 5), read, seed, 1 + seed % 7));
        }
    }
}
