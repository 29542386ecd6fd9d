using System.Buffers.Binary;
using System.Collections.Immutable;

namespace XCall.Marshal.Tests;

using IntStringDictionaryMarshaller = DictionaryMarshaller<int, UnmanagedMarshaller<int>, string?, StringMarshaller>;

/// <summary>
/// A collection's count is only a claim: a reader allocates a bounded start before it has read any element,
/// so a count the bytes cannot back costs little, whatever an element takes in memory.
/// </summary>
public sealed class PreallocationTests
{
    private const int PayloadBytes = 1 << 20;

    public static TheoryData<string> Readers => [.. ReadersByName.Keys];

    private static readonly Dictionary<string, ReadFunc<object?>> ReadersByName = new()
    {
        ["string?[]"] = (ref MarshalReader r) => ArrayMarshaller<string?, StringMarshaller>.Read(ref r),
        ["List<string?>"] = (ref MarshalReader r) => ListMarshaller<string?, StringMarshaller>.Read(ref r),
        ["HashSet<string?>"] = (ref MarshalReader r) => HashSetMarshaller<string?, StringMarshaller>.Read(ref r),
        ["ImmutableArray<string?>"] = (ref MarshalReader r) => ImmutableArrayMarshaller<string?, StringMarshaller>.Read(ref r),
        ["Dictionary<int, string?>"] = (ref MarshalReader r) => IntStringDictionaryMarshaller.Read(ref r),
    };

    [Theory]
    [MemberData(nameof(Readers))]
    public void A_count_the_bytes_cannot_back_allocates_little_before_it_is_rejected(string name)
    {
        // 1 MiB that claims as many elements as it has bytes (dictionaries: half), then an impossible first string.
        bool pairs = name.StartsWith("Dictionary", StringComparison.Ordinal);
        byte[] payload = new byte[PayloadBytes];
        BinaryPrimitives.WriteInt32LittleEndian(payload, (PayloadBytes - 4) / (pairs ? 2 : 1));
        BinaryPrimitives.WriteInt32LittleEndian(payload.AsSpan(pairs ? 8 : 4), int.MaxValue);
        ReadFunc<object?> read = ReadersByName[name];
        Wire.AssertRejected(payload, read); // JIT and first-use allocations out of the way

        long before = GC.GetAllocatedBytesForCurrentThread();
        Wire.AssertRejected(payload, read);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        // Allocating the claimed count would take 4-8 MiB (a reference per element); a bounded start, kilobytes.
        Assert.True(allocated < 128 * 1024, $"{name}: {allocated:N0} bytes allocated for a payload that failed at its first element");
    }

    [Theory]
    [InlineData(1)]
    [InlineData(1024)]
    [InlineData(1025)]
    [InlineData(5000)]
    public void Collections_longer_than_the_bounded_start_read_whole(int count)
    {
        string?[] values = [.. Enumerable.Range(0, count).Select(i => i % 7 == 0 ? null : "s" + i)];
        byte[] bytes = Wire.Encode((ref MarshalWriter w) => ArrayMarshaller<string?, StringMarshaller>.Write(ref w, values));

        Assert.Equal(values, Wire.Decode(bytes, (ref MarshalReader r) => ArrayMarshaller<string?, StringMarshaller>.Read(ref r)));
        Assert.Equal(values, Wire.Decode(bytes, (ref MarshalReader r) => ListMarshaller<string?, StringMarshaller>.Read(ref r)));
        Assert.Equal(values, Wire.Decode(bytes, (ref MarshalReader r) => ImmutableArrayMarshaller<string?, StringMarshaller>.Read(ref r)).ToArray());
        string?[] distinct = [.. values.Distinct()];
        byte[] setBytes = Wire.Encode((ref MarshalWriter w) => ArrayMarshaller<string?, StringMarshaller>.Write(ref w, distinct));
        Assert.Equal(distinct.ToHashSet(), Wire.Decode(setBytes, (ref MarshalReader r) => HashSetMarshaller<string?, StringMarshaller>.Read(ref r)));
        var dictionary = Enumerable.Range(0, count).ToDictionary(i => i, i => values[i]);
        byte[] dictionaryBytes = Wire.Encode((ref MarshalWriter w) => IntStringDictionaryMarshaller.Write(ref w, dictionary));
        Assert.Equal(dictionary, Wire.Decode(dictionaryBytes, (ref MarshalReader r) => IntStringDictionaryMarshaller.Read(ref r)));
    }
}

/// <summary>Keys a peer chose to collide in one hash bucket are refused before they are added (quadratic otherwise).</summary>
public sealed class KeySpreadTests
{
    private const int Keys = 40_000;

    [Fact]
    public void Integer_keys_chosen_to_collide_are_a_protocol_error_before_they_are_added()
    {
        // Multiples of the table's prime all land in bucket 0: added, 40,000 of them would take quadratic time.
        int prime = new Dictionary<int, int>(Keys).EnsureCapacity(0);
        var colliding = Enumerable.Range(0, Keys).ToDictionary(i => i * prime, i => i);
        byte[] dictionaryBytes = Wire.Encode((ref MarshalWriter w) => DictionaryMarshaller<int, UnmanagedMarshaller<int>, int, UnmanagedMarshaller<int>>.Write(ref w, colliding));
        byte[] setBytes = Wire.Encode((ref MarshalWriter w) => HashSetMarshaller<int, UnmanagedMarshaller<int>>.Write(ref w, [.. colliding.Keys]));

        var clock = System.Diagnostics.Stopwatch.StartNew();
        Assert.Contains("one hash bucket", Wire.AssertRejected(dictionaryBytes, (ref MarshalReader r) => DictionaryMarshaller<int, UnmanagedMarshaller<int>, int, UnmanagedMarshaller<int>>.Read(ref r)).Message);
        Assert.Contains("one hash bucket", Wire.AssertRejected(setBytes, (ref MarshalReader r) => HashSetMarshaller<int, UnmanagedMarshaller<int>>.Read(ref r)).Message);
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(20), $"refusing took {clock.Elapsed}"); // generous: the figure that matters is measured, not asserted
    }

    [Fact]
    public void Colliding_keys_read_when_the_limit_allows_them()
    {
        // A key type whose own hash codes collide: raising MarshalLimits.MaxKeysPerBucket lets its sets through.
        int prime = new HashSet<int>(200).EnsureCapacity(0);
        byte[] bytes = Wire.Encode((ref MarshalWriter w) => HashSetMarshaller<int, UnmanagedMarshaller<int>>.Write(ref w, [.. Enumerable.Range(0, 200).Select(i => i * prime)]));
        Wire.AssertRejected(bytes, (ref MarshalReader r) => HashSetMarshaller<int, UnmanagedMarshaller<int>>.Read(ref r));
        var lenient = new MarshalLimits { MaxKeysPerBucket = 1000 };
        Assert.Equal(200, Wire.Decode(bytes, (ref MarshalReader r) => HashSetMarshaller<int, UnmanagedMarshaller<int>>.Read(ref r), lenient)!.Count);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(64)]
    [InlineData(65)]
    [InlineData(100_000)]
    public void Well_spread_keys_of_any_count_read(int count)
    {
        var random = new Random(count);
        var keys = new HashSet<long>();
        while (keys.Count < count)
        {
            keys.Add(random.NextInt64());
        }
        var dictionary = keys.ToDictionary(k => k, k => k.ToString(System.Globalization.CultureInfo.InvariantCulture));
        byte[] bytes = Wire.Encode((ref MarshalWriter w) => DictionaryMarshaller<long, UnmanagedMarshaller<long>, string?, StringMarshaller>.Write(ref w, dictionary!));
        Assert.Equal(dictionary, Wire.Decode(bytes, (ref MarshalReader r) => DictionaryMarshaller<long, UnmanagedMarshaller<long>, string?, StringMarshaller>.Read(ref r))!);
        byte[] setBytes = Wire.Encode((ref MarshalWriter w) => HashSetMarshaller<long, UnmanagedMarshaller<long>>.Write(ref w, keys));
        Assert.Equal(keys, Wire.Decode(setBytes, (ref MarshalReader r) => HashSetMarshaller<long, UnmanagedMarshaller<long>>.Read(ref r))!);
    }
}
