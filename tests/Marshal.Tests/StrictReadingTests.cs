namespace XCall.Marshal.Tests;

#pragma warning disable CS8631 // StringMarshaller (IMarshaller<string?>) as a dictionary key marshaller.
using StringKeyDictionaryMarshaller = DictionaryMarshaller<string, StringMarshaller, int, UnmanagedMarshaller<int>>;
#pragma warning restore CS8631
using IntStringDictionaryMarshaller = DictionaryMarshaller<int, UnmanagedMarshaller<int>, string?, StringMarshaller>;

/// <summary>Malformed, truncated or oversized input is rejected with <see cref="XCallProtocolException"/>.</summary>
public sealed class StrictReadingTests
{
    /// <summary>Every reader that takes a length from the wire, by name.</summary>
    public static TheoryData<string> LengthReaders => [.. LengthReadersByName.Keys];

    private static readonly Dictionary<string, ReadFunc<object?>> LengthReadersByName = new()
    {
        ["ReadString"] = (ref MarshalReader r) => r.ReadString(),
        ["ReadArray<int>"] = (ref MarshalReader r) => r.ReadArray<int>(),
        ["ReadArray<byte>"] = (ref MarshalReader r) => r.ReadArray<byte>(),
        ["ReadList<long>"] = (ref MarshalReader r) => r.ReadList<long>(),
        ["ReadLength"] = (ref MarshalReader r) => r.ReadLength(),
        ["ReadLength(8)"] = (ref MarshalReader r) => r.ReadLength(minElementSize: 8),
        ["ArrayMarshaller<string>"] = (ref MarshalReader r) => ArrayMarshaller<string?, StringMarshaller>.Read(ref r),
        ["ListMarshaller<int>"] = (ref MarshalReader r) => ListMarshaller<int, UnmanagedMarshaller<int>>.Read(ref r),
        ["DictionaryMarshaller<int, string>"] = (ref MarshalReader r) => IntStringDictionaryMarshaller.Read(ref r),
        ["UnmanagedMemoryMarshaller<short>"] = (ref MarshalReader r) => UnmanagedMemoryMarshaller<short>.Read(ref r),
    };

    private static byte[] Payload(WriteAction write) => Wire.Encode(write);

    /// <summary>A payload that uses every reader method and the generic marshallers.</summary>
    private static void WriteEverything(ref MarshalWriter w)
    {
        w.WriteByte(0xAB);
        w.WriteInt32(-5);
        w.Write(123456789012345L);
        w.Write(double.NaN);
        w.Write(MixedStruct.Random(new Random(1)));
        w.WriteBoolean(true);
        w.WritePresence(false);
        w.WriteByte(9); // a tag
        w.WriteNullable<Guid>(Guid.AllBitsSet);
        w.WriteNullable<int>(null);
        w.WriteString("héllo😀");
        w.WriteString(null);
        w.WriteArray<short>([1, 2, 3]);
        w.WriteList<decimal>([1.5m]);
        w.WriteLength(3);
        w.WriteBlock([1, 2, 3]);
        w.WriteBlock([4, 5]);
        ArrayMarshaller<string?, StringMarshaller>.Write(ref w, ["a", null, ""]);
        ListMarshaller<int?, NullableMarshaller<int>>.Write(ref w, [1, null]);
        IntStringDictionaryMarshaller.Write(ref w, new() { [1] = "x", [2] = null });
        NullableValueMarshaller<Person, PersonMarshaller>.Write(ref w, new Person("p", 3, DateTime.UnixEpoch));
        NodeMarshaller.Write(ref w, Node.Chain(3));
        UnmanagedMemoryMarshaller<ushort>.Write(ref w, new ushort[] { 7, 8 });
    }

    private static bool ReadEverything(ref MarshalReader r)
    {
        Assert.Equal(0xAB, r.ReadByte());
        Assert.Equal(-5, r.ReadInt32());
        Assert.Equal(123456789012345L, r.Read<long>());
        Assert.True(double.IsNaN(r.Read<double>()));
        Assert.Equal(MixedStruct.Random(new Random(1)), r.Read<MixedStruct>());
        Assert.True(r.ReadBoolean());
        Assert.False(r.ReadPresence());
        Assert.Equal(9, r.ReadTag());
        Assert.Equal(Guid.AllBitsSet, r.ReadNullable<Guid>());
        Assert.Null(r.ReadNullable<int>());
        Assert.Equal("héllo😀", r.ReadString());
        Assert.Null(r.ReadString());
        Assert.Equal([1, 2, 3], r.ReadArray<short>());
        Assert.Equal([1.5m], r.ReadList<decimal>());
        int length = r.ReadLength();
        Assert.Equal([1, 2, 3], r.ReadBytesInPlace(length).ToArray());
        var block = new byte[2];
        r.ReadBlock(block);
        Assert.Equal([4, 5], block);
        Assert.Equal(new string?[] { "a", null, "" }, ArrayMarshaller<string?, StringMarshaller>.Read(ref r));
        Assert.Equal([1, null], ListMarshaller<int?, NullableMarshaller<int>>.Read(ref r));
        Assert.Equal(new Dictionary<int, string?> { [1] = "x", [2] = null }, IntStringDictionaryMarshaller.Read(ref r));
        Assert.Equal(new Person("p", 3, DateTime.UnixEpoch), NullableValueMarshaller<Person, PersonMarshaller>.Read(ref r));
        Assert.Equal(3, NodeMarshaller.Read(ref r)!.Length);
        Assert.Equal([7, 8], UnmanagedMemoryMarshaller<ushort>.Read(ref r).ToArray());
        return true;
    }

    [Fact]
    public void Every_prefix_of_a_valid_payload_is_rejected_as_truncated()
    {
        byte[] payload = Payload(WriteEverything);
        Assert.True(Wire.Decode(payload, ReadEverything));
        Assert.True(Wire.DecodeChunked(payload, ReadEverything, seed: 1, maxChunk: 3));
        for (int length = 0; length < payload.Length; length++)
        {
            byte[] prefix = payload[..length];
            Wire.AssertRejected(prefix, ReadEverything);
            // Chunked: the transport promised the whole length but delivers only the prefix...
            Assert.Throws<XCallProtocolException>(() =>
            {
                var input = new ChunkedInput(prefix, Math.Min(length, 5), new Random(length), 4);
                var reader = new MarshalReader(input.First, payload.Length, input);
                ReadEverything(ref reader);
            });
            // ...or the message really is that short.
            Wire.AssertRejectedChunked(prefix, ReadEverything, seed: length, maxChunk: 1 + length % 7);
        }
    }

    [Fact]
    public void Truncated_unmanaged_values_are_rejected()
    {
        Wire.AssertRejectedBothWays([], (ref MarshalReader r) => r.ReadByte());
        Wire.AssertRejectedBothWays([1, 2, 3], (ref MarshalReader r) => r.ReadInt32());
        Wire.AssertRejectedBothWays([1, 2, 3, 4, 5, 6, 7], (ref MarshalReader r) => r.Read<long>());
        Wire.AssertRejectedBothWays(new byte[15], (ref MarshalReader r) => r.Read<Guid>());
        Wire.AssertRejectedBothWays(new byte[55], (ref MarshalReader r) => r.Read<MixedStruct>());
        Wire.AssertRejectedBothWays([1, 0, 0, 0], (ref MarshalReader r) => r.ReadNullable<long>());
        Wire.AssertRejectedBothWays([], (ref MarshalReader r) => r.ReadBoolean());
        Wire.AssertRejectedBothWays([], (ref MarshalReader r) => r.ReadPresence());
        Wire.AssertRejectedBothWays([], (ref MarshalReader r) => r.ReadTag());
        Wire.AssertRejectedBothWays([0xFF, 0xFF, 0xFF], (ref MarshalReader r) => r.ReadString());
        Wire.AssertRejectedBothWays(new byte[9], (ref MarshalReader r) => { var b = new byte[10]; r.ReadBlock(b); return b; });
        Wire.AssertRejectedBothWays(new byte[9], (ref MarshalReader r) => r.ReadBytesInPlace(10).Length);
    }

    [Theory]
    [MemberData(nameof(LengthReaders))]
    public void Length_beyond_the_bytes_left_is_rejected(string readerName)
    {
        ReadFunc<object?> read = LengthReadersByName[readerName];
        // A count of 9 followed by only 8 bytes: too few for any reader, since every element takes at least
        // one byte (two for strings and dictionary entries). ReadLength(8): 2 elements of 8 bytes, 15 left.
        bool eightByteElements = readerName == "ReadLength(8)";
        int count = eightByteElements ? 2 : 9;
        byte[] payload = Payload((ref MarshalWriter w) => { w.WriteLength(count); w.WriteBlock(new byte[eightByteElements ? 15 : 8]); });
        XCallProtocolException e = Wire.AssertRejected(payload, read);
        Assert.Contains($"length {count}", e.Message);
        Wire.AssertRejectedChunked(payload, read);
        Wire.AssertRejectedBothWays(Payload((ref MarshalWriter w) => w.WriteLength(int.MaxValue)), read);
        Wire.AssertRejectedBothWays(Payload((ref MarshalWriter w) => w.WriteLength(1)), read);
    }

    [Fact]
    public void Length_that_exactly_fits_the_bytes_left_is_accepted()
    {
        Assert.Equal("ab", Wire.Decode(Payload((ref MarshalWriter w) => { w.WriteLength(2); w.WriteBlock([(byte)'a', 0, (byte)'b', 0]); }), (ref MarshalReader r) => r.ReadString()));
        Assert.Equal(8, Wire.Decode(Payload((ref MarshalWriter w) => { w.WriteLength(8); w.WriteBlock(new byte[8]); }), (ref MarshalReader r) => r.ReadArray<byte>())!.Length);
        Assert.Equal(2, Wire.Decode(Payload((ref MarshalWriter w) => { w.WriteLength(2); w.WriteBlock(new byte[8]); }),
            (ref MarshalReader r) => { int n = r.ReadLength(minElementSize: 4); r.ReadBlock(new byte[8]); return n; }));
    }

    [Theory]
    [MemberData(nameof(LengthReaders))]
    public void Negative_length_other_than_minus_one_is_rejected(string readerName)
    {
        ReadFunc<object?> read = LengthReadersByName[readerName];
        foreach (int length in new[] { -2, -3, -100, int.MinValue, int.MinValue + 1 })
        {
            // Enough bytes follow that only the sign can be the problem.
            byte[] payload = Payload((ref MarshalWriter w) => { w.WriteLength(length); w.WriteBlock(new byte[64]); });
            XCallProtocolException e = Wire.AssertRejected(payload, read);
            Assert.Contains(length.ToString(System.Globalization.CultureInfo.InvariantCulture), e.Message);
            Wire.AssertRejectedChunked(payload, read);
        }
    }

    [Theory]
    [MemberData(nameof(LengthReaders))]
    public void Minus_one_length_reads_as_null(string readerName)
    {
        object? value = Wire.Decode(Payload((ref MarshalWriter w) => w.WriteLength(WireFormat.NullLength)), LengthReadersByName[readerName]);
        if (readerName.StartsWith("ReadLength", StringComparison.Ordinal))
        {
            Assert.Equal(WireFormat.NullLength, value);
        }
        else if (readerName.StartsWith("UnmanagedMemory", StringComparison.Ordinal))
        {
            Assert.True(((ReadOnlyMemory<short>)value!).IsEmpty);
        }
        else
        {
            Assert.Null(value);
        }
    }

    [Fact]
    public void Negative_ReadBytesInPlace_length_is_rejected()
    {
        Wire.AssertRejectedBothWays(new byte[16], (ref MarshalReader r) => r.ReadBytesInPlace(-1).Length);
        Wire.AssertRejectedBothWays(new byte[16], (ref MarshalReader r) => r.ReadBytesInPlace(int.MinValue).Length);
    }

    [Fact]
    public void String_longer_than_MaxStringLength_is_rejected_even_when_its_bytes_are_present()
    {
        var limits = new MarshalLimits { MaxStringLength = 5 };
        Assert.Equal("12345", Wire.Decode(Payload((ref MarshalWriter w) => w.WriteString("12345")), (ref MarshalReader r) => r.ReadString(), limits));
        byte[] six = Payload((ref MarshalWriter w) => w.WriteString("123456"));
        Wire.AssertRejectedBothWays(six, (ref MarshalReader r) => r.ReadString(), limits);
        Wire.AssertRejectedBothWays(six, (ref MarshalReader r) => StringMarshaller.Read(ref r), limits);
        Wire.AssertRejectedBothWays(Payload((ref MarshalWriter w) => ArrayMarshaller<string?, StringMarshaller>.Write(ref w, ["ok", "too long"])),
            (ref MarshalReader r) => ArrayMarshaller<string?, StringMarshaller>.Read(ref r), limits);
        Assert.Equal("123456", Wire.Decode(six, (ref MarshalReader r) => r.ReadString()));
    }

    [Fact]
    public void Collection_count_beyond_MaxCollectionCount_is_rejected_even_when_its_bytes_are_present()
    {
        var limits = new MarshalLimits { MaxCollectionCount = 3 };
        Assert.Equal([1, 2, 3], Wire.Decode(Payload((ref MarshalWriter w) => w.WriteArray<int>([1, 2, 3])), (ref MarshalReader r) => r.ReadArray<int>(), limits)!);

        Wire.AssertRejectedBothWays(Payload((ref MarshalWriter w) => w.WriteArray<int>([1, 2, 3, 4])), (ref MarshalReader r) => r.ReadArray<int>(), limits);
        Wire.AssertRejectedBothWays(Payload((ref MarshalWriter w) => w.WriteList<byte>([1, 2, 3, 4])), (ref MarshalReader r) => r.ReadList<byte>(), limits);
        Wire.AssertRejectedBothWays(Payload((ref MarshalWriter w) => { w.WriteLength(4); w.WriteBlock(new byte[4]); }), (ref MarshalReader r) => r.ReadLength(), limits);
        Wire.AssertRejectedBothWays(Payload((ref MarshalWriter w) => ListMarshaller<string?, StringMarshaller>.Write(ref w, ["a", "b", "c", "d"])),
            (ref MarshalReader r) => ListMarshaller<string?, StringMarshaller>.Read(ref r), limits);
        Wire.AssertRejectedBothWays(Payload((ref MarshalWriter w) => ArrayMarshaller<int, UnmanagedMarshaller<int>>.Write(ref w, [1, 2, 3, 4])),
            (ref MarshalReader r) => ArrayMarshaller<int, UnmanagedMarshaller<int>>.Read(ref r), limits);
        Wire.AssertRejectedBothWays(Payload((ref MarshalWriter w) => IntStringDictionaryMarshaller.Write(ref w, new() { [1] = "", [2] = "", [3] = "", [4] = "" })),
            (ref MarshalReader r) => IntStringDictionaryMarshaller.Read(ref r), limits);
        Wire.AssertRejectedBothWays(Payload((ref MarshalWriter w) => UnmanagedMemoryMarshaller<byte>.Write(ref w, new byte[4])),
            (ref MarshalReader r) => UnmanagedMemoryMarshaller<byte>.Read(ref r), limits);
    }

    [Fact]
    public void Block_larger_than_MaxBlockBytes_is_rejected_even_when_its_bytes_are_present()
    {
        var limits = new MarshalLimits { MaxBlockBytes = 16 };
        Assert.Equal(4, Wire.Decode(Payload((ref MarshalWriter w) => w.WriteArray(new int[4])), (ref MarshalReader r) => r.ReadArray<int>(), limits)!.Length);
        Assert.Equal(16, Wire.Decode(Payload((ref MarshalWriter w) => w.WriteArray(new byte[16])), (ref MarshalReader r) => r.ReadArray<byte>(), limits)!.Length);

        Wire.AssertRejectedBothWays(Payload((ref MarshalWriter w) => w.WriteArray(new int[5])), (ref MarshalReader r) => r.ReadArray<int>(), limits);
        Wire.AssertRejectedBothWays(Payload((ref MarshalWriter w) => w.WriteArray(new byte[17])), (ref MarshalReader r) => r.ReadArray<byte>(), limits);
        Wire.AssertRejectedBothWays(Payload((ref MarshalWriter w) => w.WriteArray(new Guid[2])), (ref MarshalReader r) => r.ReadArray<Guid>(), limits);
        Wire.AssertRejectedBothWays(Payload((ref MarshalWriter w) => w.WriteList(new List<long> { 1, 2, 3 })), (ref MarshalReader r) => r.ReadList<long>(), limits);
        Wire.AssertRejectedBothWays(Payload((ref MarshalWriter w) => UnmanagedMemoryMarshaller<long>.Write(ref w, new long[3])),
            (ref MarshalReader r) => UnmanagedMemoryMarshaller<long>.Read(ref r), limits);
        Wire.AssertRejectedBothWays(Payload((ref MarshalWriter w) => UnmanagedArrayMarshaller<MixedStruct>.Write(ref w, new MixedStruct[1])),
            (ref MarshalReader r) => UnmanagedArrayMarshaller<MixedStruct>.Read(ref r), limits);
    }

    [Fact]
    public void Huge_claimed_length_is_rejected_before_allocating()
    {
        byte[] claim = BitConverter.GetBytes(1 << 30); // 4 bytes claiming 2^30 elements, nothing after
        var readers = new Dictionary<string, ReadFunc<object?>>(LengthReadersByName)
        {
            ["ReadArray<Guid>"] = (ref MarshalReader r) => r.ReadArray<Guid>(),
            ["ReadList<int>"] = (ref MarshalReader r) => r.ReadList<int>(),
            ["ListMarshaller<string>"] = (ref MarshalReader r) => ListMarshaller<string?, StringMarshaller>.Read(ref r),
            ["DictionaryMarshaller<string, int>"] = (ref MarshalReader r) => StringKeyDictionaryMarshaller.Read(ref r),
            ["ArrayMarshaller<Person?>"] = (ref MarshalReader r) => ArrayMarshaller<Person?, NullableValueMarshaller<Person, PersonMarshaller>>.Read(ref r),
        };
        foreach ((string name, ReadFunc<object?> read) in readers)
        {
            Wire.AssertRejected(claim, read); // warm up: the first throw loads resources
            long before = GC.GetAllocatedBytesForCurrentThread();
            Wire.AssertRejected(claim, read);
            long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
            Assert.True(allocated < 64 * 1024, $"{name} allocated {allocated} bytes before rejecting a length of 2^30 in a 4-byte payload.");

            // The same through a chunked reader whose message really is 4 bytes.
            before = GC.GetAllocatedBytesForCurrentThread();
            Wire.AssertRejectedChunked(claim, read);
            allocated = GC.GetAllocatedBytesForCurrentThread() - before;
            Assert.True(allocated < 64 * 1024, $"{name} (chunked) allocated {allocated} bytes before rejecting a length of 2^30 in a 4-byte payload.");
        }
    }

    [Fact]
    public void Limits_are_those_given_or_the_defaults()
    {
        var limits = new MarshalLimits { MaxDepth = 3 };
        Assert.Same(limits, new MarshalReader([], limits).Limits);
        Assert.Same(MarshalLimits.Default, new MarshalReader([]).Limits);
        Assert.Same(limits, new MarshalReader([], 0, new ChunkedInput([], 0, new Random(1), 1), limits).Limits);
        Assert.Equal(256, MarshalLimits.Default.MaxDepth);
        Assert.Equal(256 * 1024 * 1024, MarshalLimits.Default.MaxStringLength);
        Assert.Equal(Array.MaxLength, MarshalLimits.Default.MaxCollectionCount);
        Assert.Equal(int.MaxValue, MarshalLimits.Default.MaxBlockBytes);
    }

    [Theory]
    [InlineData(2)]
    [InlineData(0x80)]
    [InlineData(0xFF)]
    public void Boolean_byte_other_than_0_or_1_is_rejected(byte value)
    {
        XCallProtocolException e = Wire.AssertRejected([value], (ref MarshalReader r) => r.ReadBoolean());
        Assert.Contains(value.ToString(System.Globalization.CultureInfo.InvariantCulture), e.Message);
        Wire.AssertRejectedChunked([0, value], (ref MarshalReader r) => r.ReadBoolean() | r.ReadBoolean());
        Assert.False(Wire.Decode([0], (ref MarshalReader r) => r.ReadBoolean()));
        Assert.True(Wire.Decode([1], (ref MarshalReader r) => r.ReadBoolean()));
    }

    [Theory]
    [InlineData(2)]
    [InlineData(0x7F)]
    [InlineData(0xFF)]
    public void Presence_byte_other_than_0_or_1_is_rejected(byte value)
    {
        byte[] payload = [value, 1, 0, 0, 0, 0, 0, 0, 0];
        Wire.AssertRejectedBothWays(payload, (ref MarshalReader r) => r.ReadPresence());
        Wire.AssertRejectedBothWays(payload, (ref MarshalReader r) => r.ReadNullable<int>());
        Wire.AssertRejectedBothWays(payload, (ref MarshalReader r) => r.ReadNullable<long>());
        Wire.AssertRejectedBothWays(payload, (ref MarshalReader r) => NullableMarshaller<int>.Read(ref r));
        Wire.AssertRejectedBothWays(payload, (ref MarshalReader r) => NullableValueMarshaller<int, UnmanagedMarshaller<int>>.Read(ref r));
        Wire.AssertRejectedBothWays(payload, (ref MarshalReader r) => NullableValueMarshaller<Person, PersonMarshaller>.Read(ref r));
        Wire.AssertRejectedBothWays(payload, (ref MarshalReader r) => NodeMarshaller.Read(ref r));
        Assert.False(Wire.Decode([0], (ref MarshalReader r) => r.ReadPresence()));
        Assert.True(Wire.Decode([1], (ref MarshalReader r) => r.ReadPresence()));
    }

    [Fact]
    public void Duplicate_dictionary_keys_are_rejected()
    {
        byte[] intKeys = Payload((ref MarshalWriter w) =>
        {
            w.WriteLength(3);
            w.WriteInt32(1); w.WriteString("a");
            w.WriteInt32(2); w.WriteString("b");
            w.WriteInt32(1); w.WriteString("c");
        });
        Wire.AssertRejectedBothWays(intKeys, (ref MarshalReader r) => IntStringDictionaryMarshaller.Read(ref r));

        byte[] stringKeys = Payload((ref MarshalWriter w) =>
        {
            w.WriteLength(2);
            w.WriteString("same"); w.WriteInt32(1);
            w.WriteString("same"); w.WriteInt32(2);
        });
        Wire.AssertRejectedBothWays(stringKeys, (ref MarshalReader r) => StringKeyDictionaryMarshaller.Read(ref r));

        // Keys that differ only by case are distinct with the default comparer.
        byte[] caseKeys = Payload((ref MarshalWriter w) =>
        {
            w.WriteLength(2);
            w.WriteString("Key"); w.WriteInt32(1);
            w.WriteString("key"); w.WriteInt32(2);
        });
        Assert.Equal(2, Wire.Decode(caseKeys, (ref MarshalReader r) => StringKeyDictionaryMarshaller.Read(ref r))!.Count);
    }

    [Fact]
    public void Null_dictionary_key_is_rejected()
    {
        byte[] payload = Payload((ref MarshalWriter w) =>
        {
            w.WriteLength(1);
            w.WriteString(null); w.WriteInt32(1);
        });
        Wire.AssertRejectedBothWays(payload, (ref MarshalReader r) => StringKeyDictionaryMarshaller.Read(ref r));
    }

    [Fact]
    public void EnsureFullyConsumed_detects_trailing_bytes()
    {
        byte[] payload = Payload((ref MarshalWriter w) => { w.WriteInt32(1); w.WriteString("x"); w.WriteByte(0); });
        Assert.Throws<XCallProtocolException>(() =>
        {
            var r = new MarshalReader(payload);
            r.ReadInt32();
            r.ReadString();
            r.EnsureFullyConsumed();
        });
        for (int seed = 0; seed < 10; seed++)
        {
            // The trailing byte is in a chunk the reader has not asked for yet.
            Assert.Throws<XCallProtocolException>(() =>
            {
                var input = new ChunkedInput(payload, 4, new Random(seed), 2);
                var r = new MarshalReader(input.First, payload.Length, input);
                r.ReadInt32();
                r.ReadString();
                Assert.Equal(1, r.Remaining);
                r.EnsureFullyConsumed();
            });
        }
        // Nothing read at all.
        Assert.Throws<XCallProtocolException>(() => new MarshalReader(payload).EnsureFullyConsumed());
        Assert.Throws<XCallProtocolException>(() => new MarshalReader([], 1, new ChunkedInput([0], 0, new Random(1), 1)).EnsureFullyConsumed());

        // Everything read: no error.
        var all = new MarshalReader(payload);
        all.ReadInt32();
        all.ReadString();
        all.ReadByte();
        all.EnsureFullyConsumed();
        new MarshalReader([]).EnsureFullyConsumed();
    }

    [Fact]
    public void EnterObject_beyond_MaxDepth_throws()
    {
        var limits = new MarshalLimits { MaxDepth = 4 };
        Assert.Throws<XCallProtocolException>(() =>
        {
            var r = new MarshalReader([], limits);
            for (int i = 0; i < 4; i++)
            {
                r.EnterObject();
            }
            r.EnterObject();
        });

        // Leaving a level makes room for another.
        var reader = new MarshalReader([], limits);
        for (int round = 0; round < 10; round++)
        {
            for (int i = 0; i < 4; i++)
            {
                reader.EnterObject();
            }
            for (int i = 0; i < 4; i++)
            {
                reader.ExitObject();
            }
        }
        reader.EnterObject();
    }

    [Fact]
    public void Payload_nested_deeper_than_MaxDepth_is_rejected()
    {
        var limits = new MarshalLimits { MaxDepth = 8 };
        byte[] eight = Payload((ref MarshalWriter w) => NodeMarshaller.Write(ref w, Node.Chain(8)));
        Assert.Equal(8, Wire.Decode(eight, (ref MarshalReader r) => NodeMarshaller.Read(ref r), limits)!.Length);
        byte[] nine = Payload((ref MarshalWriter w) => NodeMarshaller.Write(ref w, Node.Chain(9)));
        Wire.AssertRejectedBothWays(nine, (ref MarshalReader r) => NodeMarshaller.Read(ref r), limits);

        // With the default limit, a hostile chain of 100,000 levels stops at 256 instead of overflowing the stack.
        byte[] deep = Payload((ref MarshalWriter w) =>
        {
            for (int i = 0; i < 100_000; i++)
            {
                w.WritePresence(true);
                w.WriteInt32(i);
            }
            w.WritePresence(false);
        });
        XCallProtocolException e = Wire.AssertRejected(deep, (ref MarshalReader r) => NodeMarshaller.Read(ref r));
        Assert.Contains("256", e.Message);
        Assert.Equal(257, Wire.Decode(Payload((ref MarshalWriter w) => NodeMarshaller.Write(ref w, Node.Chain(257))),
            (ref MarshalReader r) => NodeMarshaller.Read(ref r), new MarshalLimits { MaxDepth = 257 })!.Length);
        Wire.AssertRejected(Payload((ref MarshalWriter w) => NodeMarshaller.Write(ref w, Node.Chain(257))), (ref MarshalReader r) => NodeMarshaller.Read(ref r));
    }

    [Fact]
    public void Remaining_counts_the_bytes_not_read_yet()
    {
        byte[] payload = new byte[20];
        var r = new MarshalReader(payload);
        Assert.Equal(20, r.Remaining);
        r.ReadInt32();
        Assert.Equal(16, r.Remaining);
        r.ReadBlock(new byte[16]);
        Assert.Equal(0, r.Remaining);

        var input = new ChunkedInput(payload, 3, new Random(1), 2);
        var c = new MarshalReader(input.First, payload.Length, input);
        Assert.Equal(20, c.Remaining);
        c.ReadInt32();
        Assert.Equal(16, c.Remaining);
        c.ReadBytesInPlace(15);
        Assert.Equal(1, c.Remaining);
    }
}
