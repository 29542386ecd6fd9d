using System.Runtime.InteropServices;

namespace XCall.Marshal.Tests;

public delegate void WriteAction(ref MarshalWriter writer);

public delegate void WriteFunc<in T>(ref MarshalWriter writer, T value);

public delegate T ReadFunc<out T>(ref MarshalReader reader);

/// <summary>Encoding and decoding helpers that drive the writer and reader through every kind of memory.</summary>
public static class Wire
{
    /// <summary>Writer span sizes used for round trips: every size from 1 to 16.</summary>
    public static readonly int[] AllTinySpans = [.. Enumerable.Range(1, 16)];

    /// <summary>Largest chunk sizes used by successive chunked reads of a round trip.</summary>
    private static readonly int[] ChunkSizes = [16, 1, 6, 11, 3, 8];

    /// <summary>Encodes through an <see cref="ArrayBufferWriter{T}"/>.</summary>
    public static byte[] Encode(WriteAction write)
    {
        var output = new ArrayBufferWriter<byte>();
        var writer = new MarshalWriter(output);
        write(ref writer);
        long written = writer.BytesWritten;
        writer.Flush();
        Assert.Equal(written, output.WrittenCount);
        Assert.Equal(written, writer.BytesWritten);
        return output.WrittenSpan.ToArray();
    }

    /// <summary>Encodes into a fixed span of <paramref name="capacity"/> bytes.</summary>
    public static byte[] EncodeFixed(WriteAction write, int capacity)
    {
        var buffer = new byte[capacity];
        var writer = new MarshalWriter(buffer);
        write(ref writer);
        Assert.Equal(writer.BytesWritten, writer.WrittenSpan.Length);
        return writer.WrittenSpan.ToArray();
    }

    /// <summary>Encodes through a buffer writer that hands out at most <paramref name="maxSpan"/> bytes at a time.</summary>
    public static byte[] EncodeTiny(WriteAction write, int maxSpan, Random? random = null)
    {
        var output = new TinySpanBufferWriter(maxSpan, random);
        var writer = new MarshalWriter(output);
        write(ref writer);
        long written = writer.BytesWritten;
        writer.Flush();
        Assert.Equal(written, output.WrittenSpan.Length);
        return output.ToArray();
    }

    /// <summary>Reads the whole of <paramref name="data"/> from one span.</summary>
    public static T Decode<T>(ReadOnlySpan<byte> data, ReadFunc<T> read, MarshalLimits? limits = null)
    {
        var reader = new MarshalReader(data, limits);
        T value = read(ref reader);
        reader.EnsureFullyConsumed();
        return value;
    }

    /// <summary>Reads the whole of <paramref name="data"/> through the chunked constructor, the first chunk
    /// and the following ones of random sizes from 1 to <paramref name="maxChunk"/>.</summary>
    public static T DecodeChunked<T>(byte[] data, ReadFunc<T> read, int seed, int maxChunk, MarshalLimits? limits = null)
    {
        var random = new Random(seed);
        int first = random.Next(0, Math.Min(data.Length, maxChunk) + 1);
        var input = new ChunkedInput(data, first, random, maxChunk, trailingGarbage: [0xAB, 0xCD, 0xEF]);
        var reader = new MarshalReader(input.First, data.Length, input, limits);
        T value = read(ref reader);
        reader.EnsureFullyConsumed();
        Assert.True(input.Exhausted, "The reader finished without asking for every chunk.");
        return value;
    }

    /// <summary>
    /// Writes <paramref name="value"/> through a growing buffer, a fixed span of the exact size and tiny
    /// spans of each size in <paramref name="spanSizes"/>, asserts every encoding is the same bytes, then
    /// reads it back from one span and in random chunks and checks each result with <paramref name="assertEqual"/>.
    /// Returns the encoding.
    /// </summary>
    public static byte[] AssertRoundTrip<T>(
        T value,
        WriteFunc<T> write,
        ReadFunc<T> read,
        Action<T, T> assertEqual,
        int[]? spanSizes = null,
        int chunkedReads = 4,
        int seed = 1)
    {
        byte[] canonical = Encode((ref MarshalWriter w) => write(ref w, value));
        assertEqual(value, Decode(canonical, read));

        AssertSameBytes(canonical, EncodeFixed((ref MarshalWriter w) => write(ref w, value), canonical.Length), "fixed span");
        foreach (int size in spanSizes ?? AllTinySpans)
        {
            AssertSameBytes(canonical, EncodeTiny((ref MarshalWriter w) => write(ref w, value), size), $"spans of {size} byte(s)");
        }
        AssertSameBytes(canonical, EncodeTiny((ref MarshalWriter w) => write(ref w, value), 16, new Random(seed)), "random spans");

        for (int i = 0; i < chunkedReads; i++)
        {
            int maxChunk = ChunkSizes[i % ChunkSizes.Length];
            assertEqual(value, DecodeChunked(canonical, read, seed * 7919 + i, maxChunk));
        }
        return canonical;
    }

    /// <summary><see cref="AssertRoundTrip{T}"/> through a marshaller, comparing with Assert.Equal.</summary>
    public static byte[] RoundTrip<T, TMarshaller>(T value, int[]? spanSizes = null, int chunkedReads = 4, Action<T, T>? assertEqual = null)
        where TMarshaller : IMarshaller<T>
        => AssertRoundTrip(
            value,
            (ref MarshalWriter w, T v) => TMarshaller.Write(ref w, v),
            (ref MarshalReader r) => TMarshaller.Read(ref r),
            assertEqual ?? ((expected, actual) => Assert.Equal(expected, actual)),
            spanSizes,
            chunkedReads);

    /// <summary>Asserts two unmanaged values have the same bytes (so -0.0, NaN payloads, decimal scale and DateTime kind count).</summary>
    public static void AssertBitwiseEqual<T>(T expected, T actual) where T : unmanaged
    {
        ReadOnlySpan<byte> e = MemoryMarshal.AsBytes(new ReadOnlySpan<T>(in expected));
        ReadOnlySpan<byte> a = MemoryMarshal.AsBytes(new ReadOnlySpan<T>(in actual));
        if (!e.SequenceEqual(a))
        {
            Assert.Fail($"{typeof(T).Name}: expected {expected} [{Convert.ToHexString(e)}], got {actual} [{Convert.ToHexString(a)}].");
        }
    }

    /// <summary>Asserts two arrays hold the same bytes, naming the first difference.</summary>
    public static void AssertSameBytes(ReadOnlySpan<byte> expected, ReadOnlySpan<byte> actual, string what = "")
    {
        if (expected.SequenceEqual(actual))
        {
            return;
        }
        int i = expected.CommonPrefixLength(actual);
        Assert.Fail($"Bytes differ ({what}): lengths {expected.Length} and {actual.Length}, first difference at {i}: " +
            $"expected {Hex(expected.Slice(i, Math.Min(16, expected.Length - i)))}, got {Hex(actual.Slice(i, Math.Min(16, actual.Length - i)))}.");
    }

    /// <summary>Asserts two unmanaged spans have the same bytes.</summary>
    public static void AssertSameElements<T>(ReadOnlySpan<T> expected, ReadOnlySpan<T> actual) where T : unmanaged
    {
        Assert.Equal(expected.Length, actual.Length);
        AssertSameBytes(MemoryMarshal.AsBytes(expected), MemoryMarshal.AsBytes(actual), typeof(T).Name);
    }

    public static string Hex(ReadOnlySpan<byte> bytes) => Convert.ToHexString(bytes);

    /// <summary>Raw bytes of an unmanaged value.</summary>
    public static byte[] BytesOf<T>(T value) where T : unmanaged => MemoryMarshal.AsBytes(new ReadOnlySpan<T>(in value)).ToArray();

    /// <summary>An unmanaged value made of random bytes.</summary>
    public static T RandomBits<T>(Random random) where T : unmanaged
    {
        T value = default;
        random.NextBytes(MemoryMarshal.AsBytes(MemoryMarshal.CreateSpan(ref value, 1)));
        return value;
    }

    /// <summary>Reads <paramref name="data"/> with <paramref name="read"/> from one span, expecting the read itself to be rejected.</summary>
    public static XCallProtocolException AssertRejected<T>(byte[] data, ReadFunc<T> read, MarshalLimits? limits = null)
        => Assert.Throws<XCallProtocolException>(() =>
        {
            var reader = new MarshalReader(data, limits);
            read(ref reader);
        });

    /// <summary>Like <see cref="AssertRejected{T}"/> but through one-byte chunks.</summary>
    public static XCallProtocolException AssertRejectedChunked<T>(byte[] data, ReadFunc<T> read, MarshalLimits? limits = null, int seed = 5, int maxChunk = 1)
        => Assert.Throws<XCallProtocolException>(() =>
        {
            var random = new Random(seed);
            var input = new ChunkedInput(data, Math.Min(1, data.Length), random, maxChunk);
            var reader = new MarshalReader(input.First, data.Length, input, limits);
            read(ref reader);
        });

    /// <summary>Both <see cref="AssertRejected{T}"/> and <see cref="AssertRejectedChunked{T}"/>.</summary>
    public static void AssertRejectedBothWays<T>(byte[] data, ReadFunc<T> read, MarshalLimits? limits = null)
    {
        AssertRejected(data, read, limits);
        AssertRejectedChunked(data, read, limits);
    }
}
