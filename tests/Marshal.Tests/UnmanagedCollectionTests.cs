using System.Runtime.InteropServices;

namespace XCall.Marshal.Tests;

public sealed class UnmanagedCollectionTests
{
    private static void AssertArrayRoundTrips<T>(T[]? value, int[]? spanSizes = null, int chunkedReads = 4) where T : unmanaged
    {
        Action<T[]?, T[]?> same = (e, a) =>
        {
            if (e is null)
            {
                Assert.Null(a);
                return;
            }
            Assert.NotNull(a);
            Wire.AssertSameElements<T>(e, a);
        };
        byte[] bytes = Wire.AssertRoundTrip(value, (ref MarshalWriter w, T[]? v) => w.WriteArray(v), (ref MarshalReader r) => r.ReadArray<T>(),
            same, spanSizes, chunkedReads);
        Wire.AssertSameBytes(bytes, Wire.RoundTrip<T[]?, UnmanagedArrayMarshaller<T>>(value, spanSizes, chunkedReads, same));

        // The list form is the same wire format.
        List<T>? list = value is null ? null : [.. value];
        byte[] listBytes = Wire.AssertRoundTrip(list, (ref MarshalWriter w, List<T>? v) => w.WriteList(v), (ref MarshalReader r) => r.ReadList<T>(),
            (e, a) => same(e?.ToArray(), a?.ToArray()), spanSizes, chunkedReads);
        Wire.AssertSameBytes(bytes, listBytes, "list");
        Wire.AssertSameBytes(bytes, Wire.RoundTrip<List<T>?, UnmanagedListMarshaller<T>>(list, spanSizes, chunkedReads,
            (e, a) => same(e?.ToArray(), a?.ToArray())), "UnmanagedListMarshaller");
    }

    [Fact]
    public void Unmanaged_array_null_and_empty_are_distinct()
    {
        AssertArrayRoundTrips<int>(null);
        AssertArrayRoundTrips<int>([]);
        Assert.Equal([0xFF, 0xFF, 0xFF, 0xFF], Wire.Encode((ref MarshalWriter w) => w.WriteArray<int>(null)));
        Assert.Equal([0, 0, 0, 0], Wire.Encode((ref MarshalWriter w) => w.WriteArray<int>([])));
        Assert.Null(Wire.Decode([0xFF, 0xFF, 0xFF, 0xFF], (ref MarshalReader r) => r.ReadArray<Guid>()));
        Assert.Empty(Wire.Decode([0, 0, 0, 0], (ref MarshalReader r) => r.ReadArray<Guid>())!);
        Assert.Null(Wire.Decode([0xFF, 0xFF, 0xFF, 0xFF], (ref MarshalReader r) => r.ReadList<Guid>()));
        Assert.Empty(Wire.Decode([0, 0, 0, 0], (ref MarshalReader r) => r.ReadList<Guid>())!);
    }

    [Fact]
    public void Unmanaged_array_is_written_as_count_and_element_bytes()
    {
        byte[] bytes = Wire.Encode((ref MarshalWriter w) => w.WriteArray(new short[] { 1, -1, 0x0203 }));
        Assert.Equal([3, 0, 0, 0, 1, 0, 0xFF, 0xFF, 3, 2], bytes);
    }

    [Fact]
    public void Arrays_of_every_unmanaged_element_type_round_trip()
    {
        var random = new Random(42);
        AssertArrayRoundTrips<byte>([0, 1, 255]);
        AssertArrayRoundTrips<sbyte>([sbyte.MinValue, 0, sbyte.MaxValue]);
        AssertArrayRoundTrips<short>([short.MinValue, short.MaxValue]);
        AssertArrayRoundTrips<ushort>([0, ushort.MaxValue]);
        AssertArrayRoundTrips([int.MinValue, -1, 0, int.MaxValue]);
        AssertArrayRoundTrips([uint.MaxValue]);
        AssertArrayRoundTrips([long.MinValue, long.MaxValue]);
        AssertArrayRoundTrips([ulong.MaxValue, 0UL]);
        AssertArrayRoundTrips([double.NaN, -0.0, double.NegativeInfinity, double.Epsilon, double.MaxValue]);
        AssertArrayRoundTrips([float.NaN, -0.0f, float.PositiveInfinity]);
        AssertArrayRoundTrips(['a', '\uD83D', '\uDE00', '\0']);
        AssertArrayRoundTrips([true, false, true]);
        AssertArrayRoundTrips<nint>([nint.MinValue, nint.MaxValue]);
        AssertArrayRoundTrips([ByteColor.Red, (ByteColor)9]);
        AssertArrayRoundTrips([LongCode.Low, LongCode.High]);
        AssertArrayRoundTrips([DateTime.MinValue, DateTime.SpecifyKind(DateTime.MaxValue, DateTimeKind.Utc), new DateTime(2000, 1, 1, 0, 0, 0, DateTimeKind.Local)]);
        AssertArrayRoundTrips([DateTimeOffset.MaxValue, new DateTimeOffset(2000, 1, 1, 0, 0, 0, TimeSpan.FromHours(-5))]);
        AssertArrayRoundTrips([TimeSpan.MinValue, TimeSpan.MaxValue]);
        AssertArrayRoundTrips([Guid.Empty, Guid.AllBitsSet, Wire.RandomBits<Guid>(random)]);
        AssertArrayRoundTrips([decimal.MaxValue, 1.00m, -0.001m]);
        AssertArrayRoundTrips([MixedStruct.Random(random), default, MixedStruct.Random(random)]);
    }

    [Fact]
    public void Large_unmanaged_arrays_and_lists_round_trip()
    {
        var random = new Random(7);
        var ints = new int[100_000];
        random.NextBytes(MemoryMarshal.AsBytes(ints.AsSpan()));
        AssertArrayRoundTrips(ints, [3], chunkedReads: 2);

        // A million elements: contiguous and in large chunks.
        var longs = new long[1_000_000];
        random.NextBytes(MemoryMarshal.AsBytes(longs.AsSpan()));
        byte[] bytes = Wire.Encode((ref MarshalWriter w) => w.WriteArray(longs));
        Assert.Equal(4 + 8_000_000, bytes.Length);
        Wire.AssertSameElements<long>(longs, Wire.Decode(bytes, (ref MarshalReader r) => r.ReadArray<long>()));
        Wire.AssertSameElements<long>(longs, Wire.DecodeChunked(bytes, (ref MarshalReader r) => r.ReadArray<long>(), seed: 4, maxChunk: 100_000));
        Wire.AssertSameBytes(bytes, Wire.EncodeTiny((ref MarshalWriter w) => w.WriteArray(longs), 4096));

        var structs = new MixedStruct[20_000];
        for (int i = 0; i < structs.Length; i++)
        {
            structs[i] = MixedStruct.Random(random);
        }
        AssertArrayRoundTrips(structs, [5], chunkedReads: 1);
    }

    [Fact]
    public void Random_unmanaged_arrays_round_trip()
    {
        var random = new Random(99);
        for (int i = 0; i < 200; i++)
        {
            var longs = new long[random.Next(0, 40)];
            random.NextBytes(MemoryMarshal.AsBytes(longs.AsSpan()));
            AssertArrayRoundTrips(longs, [1 + i % 16], chunkedReads: 2);
            var bytes = new byte[random.Next(0, 40)];
            random.NextBytes(bytes);
            AssertArrayRoundTrips(bytes, [1 + i % 16], chunkedReads: 2);
        }
    }

    [Fact]
    public void ReadOnlySpan_written_with_WriteSpan_reads_back_as_array()
    {
        int[] source = [10, 20, 30, 40, 50];
        byte[] bytes = Wire.Encode((ref MarshalWriter w) => w.WriteSpan<int>(source.AsSpan(1, 3)));
        Assert.Equal([20, 30, 40], Wire.Decode(bytes, (ref MarshalReader r) => r.ReadArray<int>()!));
        Assert.Equal(bytes, Wire.Encode((ref MarshalWriter w) => w.WriteArray<int>([20, 30, 40])));

        byte[] empty = Wire.Encode((ref MarshalWriter w) => w.WriteSpan(ReadOnlySpan<double>.Empty));
        Assert.Equal([0, 0, 0, 0], empty);
        Assert.Empty(Wire.Decode(empty, (ref MarshalReader r) => r.ReadArray<double>())!);

        var random = new Random(3);
        var big = new Guid[5_000];
        random.NextBytes(MemoryMarshal.AsBytes(big.AsSpan()));
        for (int size = 1; size <= 16; size++)
        {
            byte[] tiny = Wire.EncodeTiny((ref MarshalWriter w) => w.WriteSpan<Guid>(big.AsSpan(7, 4_000)), size);
            Guid[] back = Wire.DecodeChunked(tiny, (ref MarshalReader r) => r.ReadArray<Guid>()!, seed: size, maxChunk: size);
            Wire.AssertSameElements<Guid>(big.AsSpan(7, 4_000), back);
        }
    }

    [Fact]
    public void ReadOnlyMemory_round_trips_and_arrives_array_backed()
    {
        Action<ReadOnlyMemory<long>, ReadOnlyMemory<long>> same = (e, a) =>
        {
            Wire.AssertSameElements(e.Span, a.Span);
            Assert.True(MemoryMarshal.TryGetArray(a, out ArraySegment<long> segment));
            Assert.Equal(0, segment.Offset);
        };
        long[] source = [1, 2, 3, long.MaxValue, long.MinValue, 6];
        byte[] slice = Wire.RoundTrip<ReadOnlyMemory<long>, UnmanagedMemoryMarshaller<long>>(source.AsMemory(2, 3), assertEqual: same);
        Assert.Equal(Wire.Encode((ref MarshalWriter w) => w.WriteArray<long>([3, long.MaxValue, long.MinValue])), slice);
        Wire.RoundTrip<ReadOnlyMemory<long>, UnmanagedMemoryMarshaller<long>>(source, assertEqual: same);

        byte[] empty = Wire.RoundTrip<ReadOnlyMemory<long>, UnmanagedMemoryMarshaller<long>>(default, assertEqual: same);
        Assert.Equal([0, 0, 0, 0], empty);
        // A null array on the wire arrives as empty memory rather than failing.
        ReadOnlyMemory<long> fromNull = Wire.Decode([0xFF, 0xFF, 0xFF, 0xFF], (ref MarshalReader r) => UnmanagedMemoryMarshaller<long>.Read(ref r));
        Assert.True(fromNull.IsEmpty);

        var big = new byte[300_000];
        new Random(11).NextBytes(big);
        Wire.RoundTrip<ReadOnlyMemory<byte>, UnmanagedMemoryMarshaller<byte>>(big, [2, 13], chunkedReads: 1,
            (e, a) => Wire.AssertSameBytes(e.Span, a.Span));
    }

    [Fact]
    public void List_of_unmanaged_values_round_trips_null_empty_and_large()
    {
        Assert.Null(Wire.Decode(Wire.Encode((ref MarshalWriter w) => w.WriteList<int>(null)), (ref MarshalReader r) => r.ReadList<int>()));
        List<int>? empty = Wire.Decode(Wire.Encode((ref MarshalWriter w) => w.WriteList<int>([])), (ref MarshalReader r) => r.ReadList<int>());
        Assert.NotNull(empty);
        Assert.Empty(empty);

        var random = new Random(5);
        List<DateTime> large = [.. Enumerable.Range(0, 200_000).Select(_ => new DateTime(random.NextInt64(DateTime.MaxValue.Ticks), (DateTimeKind)random.Next(3)))];
        byte[] bytes = Wire.Encode((ref MarshalWriter w) => w.WriteList(large));
        Assert.Equal(4 + 8 * large.Count, bytes.Length);
        List<DateTime> back = Wire.DecodeChunked(bytes, (ref MarshalReader r) => r.ReadList<DateTime>()!, seed: 1, maxChunk: 4096);
        Assert.Equal(large.Count, back.Count);
        Wire.AssertSameElements<DateTime>(CollectionsMarshal.AsSpan(large), CollectionsMarshal.AsSpan(back));
        Assert.Equal(large.Select(d => d.Kind), back.Select(d => d.Kind));

        // A list written through its marshaller reads back through the array reader and the other way round.
        int[] array = [5, 6, 7];
        Assert.Equal(array, Wire.Decode(Wire.Encode((ref MarshalWriter w) => UnmanagedListMarshaller<int>.Write(ref w, [5, 6, 7])), (ref MarshalReader r) => r.ReadArray<int>()));
        Assert.Equal([5, 6, 7], Wire.Decode(Wire.Encode((ref MarshalWriter w) => w.WriteArray(array)), (ref MarshalReader r) => r.ReadList<int>()));
    }
}
