namespace XCall.Marshal.Tests;

// The generator composes the built-in marshallers like this; the aliases keep the tests readable.
// StringMarshaller marshals string? and is also the key marshaller of string-keyed dictionaries.
#pragma warning disable CS8631 // IMarshaller<string?> used where IMarshaller<string> is expected: the key marshaller.
using StringListDictionaryMarshaller = DictionaryMarshaller<string, StringMarshaller, List<int>?, UnmanagedListMarshaller<int>>;
using NestedDictionaryMarshaller = DictionaryMarshaller<string, StringMarshaller,
    Dictionary<int, string?[]?>?, DictionaryMarshaller<int, UnmanagedMarshaller<int>, string?[]?, ArrayMarshaller<string?, StringMarshaller>>>;
#pragma warning restore CS8631
using IntStringDictionaryMarshaller = DictionaryMarshaller<int, UnmanagedMarshaller<int>, string?, StringMarshaller>;
using StringArrayMarshaller = ArrayMarshaller<string?, StringMarshaller>;
using StringListMarshaller = ListMarshaller<string?, StringMarshaller>;
using NullablePersonMarshaller = NullableValueMarshaller<Person, PersonMarshaller>;

public sealed class GenericMarshallerTests
{
    [Fact]
    public void Array_of_strings_round_trips_with_null_elements()
    {
        string?[] value = ["a", null, "", "😀", null, "\uD800"];
        byte[] bytes = Wire.RoundTrip<string?[]?, StringArrayMarshaller>(value);
        byte[] expected = Wire.Encode((ref MarshalWriter w) =>
        {
            w.WriteLength(value.Length);
            foreach (string? s in value)
            {
                w.WriteString(s);
            }
        });
        Assert.Equal(expected, bytes);
    }

    [Fact]
    public void Null_and_empty_string_arrays_are_distinct()
    {
        Assert.Equal([0xFF, 0xFF, 0xFF, 0xFF], Wire.RoundTrip<string?[]?, StringArrayMarshaller>(null));
        Assert.Equal([0, 0, 0, 0], Wire.RoundTrip<string?[]?, StringArrayMarshaller>([]));
        Assert.Null(Wire.Decode([0xFF, 0xFF, 0xFF, 0xFF], (ref MarshalReader r) => StringArrayMarshaller.Read(ref r)));
        Assert.Empty(Wire.Decode([0, 0, 0, 0], (ref MarshalReader r) => StringArrayMarshaller.Read(ref r))!);
        Assert.Null(Wire.Decode([0xFF, 0xFF, 0xFF, 0xFF], (ref MarshalReader r) => StringListMarshaller.Read(ref r)));
        Assert.Empty(Wire.Decode([0, 0, 0, 0], (ref MarshalReader r) => StringListMarshaller.Read(ref r))!);
    }

    [Fact]
    public void List_of_strings_round_trips_with_null_elements_and_matches_the_array_format()
    {
        List<string?> value = [null, "x", "", null, "long " + new string('z', 1000)];
        byte[] listBytes = Wire.RoundTrip<List<string?>?, StringListMarshaller>(value);
        Assert.Equal(Wire.Encode((ref MarshalWriter w) => StringArrayMarshaller.Write(ref w, [.. value])), listBytes);
        Wire.RoundTrip<List<string?>?, StringListMarshaller>(null);
        Wire.RoundTrip<List<string?>?, StringListMarshaller>([]);
    }

    [Fact]
    public void Reading_into_an_empty_list_fills_that_list_and_any_other_list_is_left_alone()
    {
        byte[] bytes = Wire.Encode((ref MarshalWriter w) => StringListMarshaller.Write(ref w, ["a", null, "c"]));
        byte[] nullBytes = Wire.Encode((ref MarshalWriter w) => StringListMarshaller.Write(ref w, null));

        var fresh = new List<string?>();
        List<string?>? filled = Wire.Decode(bytes, (ref MarshalReader r) => StringListMarshaller.ReadInto(ref r, fresh));
        Assert.Same(fresh, filled);
        Assert.Equal(["a", null, "c"], fresh);

        // A list that already holds items is not the constructor's fresh one: a new list, the old one untouched.
        List<string?> used = ["x"];
        List<string?>? other = Wire.Decode(bytes, (ref MarshalReader r) => StringListMarshaller.ReadInto(ref r, used));
        Assert.NotSame(used, other);
        Assert.Equal(["a", null, "c"], other!);
        Assert.Equal(["x"], used);

        Assert.Equal(["a", null, "c"], Wire.Decode(bytes, (ref MarshalReader r) => StringListMarshaller.ReadInto(ref r, null))!);
        Assert.Null(Wire.Decode(nullBytes, (ref MarshalReader r) => StringListMarshaller.ReadInto(ref r, new List<string?>())));
    }

    [Fact]
    public void Large_list_of_strings_round_trips()
    {
        var random = new Random(8);
        List<string?> value = [.. Enumerable.Range(0, 50_000).Select(i => i % 97 == 0 ? null : new string((char)('a' + random.Next(26)), random.Next(0, 12)))];
        Wire.RoundTrip<List<string?>?, StringListMarshaller>(value, [7], chunkedReads: 2);
    }

    [Fact]
    public void Dictionary_of_string_to_list_of_int_round_trips()
    {
        var value = new Dictionary<string, List<int>?>
        {
            ["empty"] = [],
            ["null"] = null,
            [""] = [int.MinValue, 0, int.MaxValue],
            ["😀"] = [.. Enumerable.Range(0, 1000)],
        };
        Wire.RoundTrip<Dictionary<string, List<int>?>?, StringListDictionaryMarshaller>(value, assertEqual: AssertSameDictionary);
        Wire.RoundTrip<Dictionary<string, List<int>?>?, StringListDictionaryMarshaller>([], assertEqual: AssertSameDictionary);
        Assert.Equal([0xFF, 0xFF, 0xFF, 0xFF], Wire.RoundTrip<Dictionary<string, List<int>?>?, StringListDictionaryMarshaller>(null, assertEqual: AssertSameDictionary));
    }

    [Fact]
    public void Dictionary_of_int_to_nullable_string_round_trips()
    {
        var value = new Dictionary<int, string?> { [int.MinValue] = null, [0] = "", [1] = "one", [int.MaxValue] = "max\uDC00" };
        byte[] bytes = Wire.RoundTrip<Dictionary<int, string?>?, IntStringDictionaryMarshaller>(value, assertEqual: AssertSameDictionary);
        Assert.Equal(4, BitConverter.ToInt32(bytes));

        var random = new Random(12);
        var large = new Dictionary<int, string?>();
        while (large.Count < 10_000)
        {
            large[random.Next()] = random.Next(5) == 0 ? null : random.Next().ToString("x", System.Globalization.CultureInfo.InvariantCulture);
        }
        Wire.RoundTrip<Dictionary<int, string?>?, IntStringDictionaryMarshaller>(large, [3], chunkedReads: 2, assertEqual: AssertSameDictionary);
    }

    [Fact]
    public void Null_and_empty_dictionaries_are_distinct()
    {
        Assert.Null(Wire.Decode(Wire.Encode((ref MarshalWriter w) => IntStringDictionaryMarshaller.Write(ref w, null)),
            (ref MarshalReader r) => IntStringDictionaryMarshaller.Read(ref r)));
        Dictionary<int, string?>? empty = Wire.Decode(Wire.Encode((ref MarshalWriter w) => IntStringDictionaryMarshaller.Write(ref w, [])),
            (ref MarshalReader r) => IntStringDictionaryMarshaller.Read(ref r));
        Assert.NotNull(empty);
        Assert.Empty(empty);
    }

    [Fact]
    public void Nested_dictionaries_of_arrays_of_strings_round_trip()
    {
        var value = new Dictionary<string, Dictionary<int, string?[]?>?>
        {
            ["a"] = new() { [1] = ["x", null, ""], [2] = null, [3] = [] },
            ["b"] = null,
            ["c"] = [],
        };
        Wire.RoundTrip<Dictionary<string, Dictionary<int, string?[]?>?>?, NestedDictionaryMarshaller>(value, assertEqual: (e, a) =>
        {
            Assert.NotNull(a);
            Assert.Equal(e!.Keys.Order(), a.Keys.Order());
            foreach ((string key, Dictionary<int, string?[]?>? inner) in e)
            {
                AssertSameDictionary(inner, a[key]);
            }
        });
    }

    [Fact]
    public void Nested_lists_and_arrays_round_trip()
    {
        List<int[]?>? lists = [[1, 2], null, [], [int.MaxValue]];
        Wire.RoundTrip<List<int[]?>?, ListMarshaller<int[]?, UnmanagedArrayMarshaller<int>>>(lists);

        List<string?>?[] jagged = [["a", null], null, [], [""]];
        Wire.RoundTrip<List<string?>?[]?, ArrayMarshaller<List<string?>?, StringListMarshaller>>(jagged);

        List<int?> nullableInts = [1, null, 0, null, int.MinValue];
        byte[] bytes = Wire.RoundTrip<List<int?>?, ListMarshaller<int?, NullableMarshaller<int>>>(nullableInts);
        Assert.Equal(4 + 5 + 1 + 5 + 1 + 5, bytes.Length);

        ReadOnlyMemory<byte>[] memories = [new byte[] { 1, 2, 3 }, ReadOnlyMemory<byte>.Empty, new byte[] { 255 }];
        Wire.RoundTrip<ReadOnlyMemory<byte>[]?, ArrayMarshaller<ReadOnlyMemory<byte>, UnmanagedMemoryMarshaller<byte>>>(memories,
            assertEqual: (e, a) => Assert.Equal(e!.Select(m => m.ToArray()), a!.Select(m => m.ToArray())));

        List<Dictionary<int, string?>?> dictionaries = [new() { [1] = "one" }, null, []];
        Wire.RoundTrip<List<Dictionary<int, string?>?>?, ListMarshaller<Dictionary<int, string?>?, IntStringDictionaryMarshaller>>(dictionaries,
            assertEqual: (e, a) =>
            {
                Assert.Equal(e!.Count, a!.Count);
                for (int i = 0; i < e.Count; i++)
                {
                    AssertSameDictionary(e[i], a[i]);
                }
            });
    }

    [Fact]
    public void Per_element_and_block_copy_marshallers_write_the_same_bytes()
    {
        int[] ints = [1, -1, int.MaxValue, 0];
        Assert.Equal(
            Wire.RoundTrip<int[]?, UnmanagedArrayMarshaller<int>>(ints),
            Wire.RoundTrip<int[]?, ArrayMarshaller<int, UnmanagedMarshaller<int>>>(ints));
        Assert.Equal(
            Wire.RoundTrip<List<int>?, UnmanagedListMarshaller<int>>([.. ints]),
            Wire.RoundTrip<List<int>?, ListMarshaller<int, UnmanagedMarshaller<int>>>([.. ints]));
        Assert.Equal(
            Wire.RoundTrip<int[]?, UnmanagedArrayMarshaller<int>>(null),
            Wire.RoundTrip<int[]?, ArrayMarshaller<int, UnmanagedMarshaller<int>>>(null));
        Assert.Equal(
            Wire.RoundTrip<ReadOnlyMemory<int>, UnmanagedMemoryMarshaller<int>>(ints, assertEqual: (e, a) => Assert.Equal(e.ToArray(), a.ToArray())),
            Wire.RoundTrip<List<int>?, UnmanagedListMarshaller<int>>([.. ints]));
        Assert.Equal(
            Wire.RoundTrip<int?, NullableMarshaller<int>>(5),
            Wire.RoundTrip<int?, NullableValueMarshaller<int, UnmanagedMarshaller<int>>>(5));
        Assert.Equal(
            Wire.RoundTrip<int?, NullableMarshaller<int>>(null),
            Wire.RoundTrip<int?, NullableValueMarshaller<int, UnmanagedMarshaller<int>>>(null));
    }

    [Fact]
    public void Nullable_struct_with_references_round_trips_present_and_null()
    {
        var born = new DateTime(1990, 5, 17, 0, 0, 0, DateTimeKind.Utc);
        Assert.Equal([0], Wire.RoundTrip<Person?, NullablePersonMarshaller>(null));
        byte[] bytes = Wire.RoundTrip<Person?, NullablePersonMarshaller>(new Person("Ada", 36, born));
        Assert.Equal(1, bytes[0]);
        Wire.RoundTrip<Person?, NullablePersonMarshaller>(new Person(null, -1, null));
        Wire.RoundTrip<Person?, NullablePersonMarshaller>(new Person("", 0, DateTime.MaxValue));

        Person?[] people = [new Person("a", 1, null), null, new Person(null, 2, born)];
        Wire.RoundTrip<Person?[]?, ArrayMarshaller<Person?, NullablePersonMarshaller>>(people);
    }

    [Fact]
    public void Recursive_type_round_trips_within_the_depth_limit()
    {
        foreach (int length in new[] { 0, 1, 2, 100, MarshalLimits.Default.MaxDepth })
        {
            Node? chain = Node.Chain(length);
            Wire.RoundTrip<Node?, NodeMarshaller>(chain, [1, 16], chunkedReads: 2, assertEqual: (e, a) =>
            {
                for (int i = 1; i <= length; i++)
                {
                    Assert.NotNull(a);
                    Assert.Equal(i, a.Value);
                    a = a.Next;
                }
                Assert.Null(a);
            });
        }
    }

    [Fact]
    public void Random_nested_collections_round_trip()
    {
        var random = new Random(31337);
        for (int i = 0; i < 200; i++)
        {
            var value = new Dictionary<string, List<int>?>();
            int count = random.Next(0, 6);
            for (int k = 0; k < count; k++)
            {
                string key = RandomString(random);
                value[key] = random.Next(4) == 0 ? null : [.. Enumerable.Range(0, random.Next(0, 10)).Select(_ => random.Next(int.MinValue, int.MaxValue))];
            }
            Wire.RoundTrip<Dictionary<string, List<int>?>?, StringListDictionaryMarshaller>(value, [1 + i % 16], chunkedReads: 2, assertEqual: AssertSameDictionary);

            string?[] strings = [.. Enumerable.Range(0, random.Next(0, 8)).Select(_ => random.Next(3) == 0 ? null : RandomString(random))];
            Wire.RoundTrip<string?[]?, StringArrayMarshaller>(strings, [1 + i % 16], chunkedReads: 2);
        }
    }

    private static string RandomString(Random random)
    {
        var chars = new char[random.Next(0, 8)];
        for (int i = 0; i < chars.Length; i++)
        {
            chars[i] = (char)random.Next(0, 0x10000);
        }
        return new string(chars);
    }

    private static void AssertSameDictionary<TKey, TValue>(Dictionary<TKey, TValue>? expected, Dictionary<TKey, TValue>? actual) where TKey : notnull
    {
        if (expected is null)
        {
            Assert.Null(actual);
            return;
        }
        Assert.NotNull(actual);
        Assert.Equal(expected.Count, actual.Count);
        foreach ((TKey key, TValue value) in expected)
        {
            Assert.True(actual.TryGetValue(key, out TValue? other), $"Key {key} is missing.");
            Assert.Equal(value, other);
        }
    }
}
