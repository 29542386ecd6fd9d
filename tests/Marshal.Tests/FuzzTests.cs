namespace XCall.Marshal.Tests;

#pragma warning disable CS8631 // StringMarshaller (IMarshaller<string?>) as a dictionary key marshaller.
using StringListDictionaryMarshaller = DictionaryMarshaller<string, StringMarshaller, List<int>?, UnmanagedListMarshaller<int>>;
#pragma warning restore CS8631
using IntStringDictionaryMarshaller = DictionaryMarshaller<int, UnmanagedMarshaller<int>, string?, StringMarshaller>;
using GuidPersonDictionaryMarshaller = DictionaryMarshaller<Guid, UnmanagedMarshaller<Guid>, Person?, NullableValueMarshaller<Person, PersonMarshaller>>;
using StringArrayMarshaller = ArrayMarshaller<string?, StringMarshaller>;
using NullableIntListMarshaller = ListMarshaller<int?, NullableMarshaller<int>>;
using NullablePersonMarshaller = NullableValueMarshaller<Person, PersonMarshaller>;
using MemoryArrayMarshaller = ArrayMarshaller<ReadOnlyMemory<byte>, UnmanagedMemoryMarshaller<byte>>;
using DictionaryListMarshaller = ListMarshaller<Dictionary<int, string?>?, DictionaryMarshaller<int, UnmanagedMarshaller<int>, string?, StringMarshaller>>;
using AnimalListMarshaller = ListMarshaller<Animal?, AnimalMarshaller>;
using NodeImmutableArrayMarshaller = ImmutableArrayMarshaller<ListNode?, ListNodeMarshaller>;

/// <summary>
/// Random and mutated payloads fed to every reader method and the generic marshallers: a read either
/// succeeds or raises <see cref="XCallProtocolException"/>; anything else is a bug.
/// </summary>
public sealed class FuzzTests
{
    private const int ProbesPerInput = 12;

    private static readonly MarshalLimits Tight = new() { MaxStringLength = 8, MaxCollectionCount = 8, MaxBlockBytes = 32, MaxDepth = 4 };

    /// <summary>Writes a valid payload of the schema <see cref="ReadSequence"/> reads, with random contents.</summary>
    private static void WriteSample(ref MarshalWriter w, Random random)
    {
        w.WriteByte((byte)random.Next(256));
        w.WriteInt32(random.Next());
        w.Write(random.NextInt64());
        w.Write(random.NextDouble());
        w.Write(new decimal(random.NextDouble()));
        w.Write(Wire.RandomBits<Guid>(random));
        w.Write(new DateTime(random.NextInt64(DateTime.MaxValue.Ticks), (DateTimeKind)random.Next(3)));
        w.Write(MixedStruct.Random(random));
        w.Write((char)random.Next(0x10000));
        w.WriteBoolean(random.Next(2) == 1);
        w.WritePresence(random.Next(2) == 1);
        w.WriteByte((byte)random.Next(4)); // a tag
        w.WriteNullable(random.Next(2) == 0 ? null : (int?)random.Next());
        w.WriteNullable(random.Next(2) == 0 ? null : (MixedStruct?)MixedStruct.Random(random));
        w.WriteString(RandomString(random));
        w.WriteArray(RandomArray(random, r => r.Next()));
        w.WriteArray(RandomArray(random, Wire.RandomBits<Guid>));
        w.WriteList(RandomArray(random, r => (short)r.Next())?.ToList());
        byte[] raw = RandomArray(random, r => (byte)r.Next()) ?? [];
        w.WriteLength(raw.Length);
        w.WriteBlock(raw);
        int blocks = random.Next(0, 3);
        w.WriteLength(blocks);
        w.WriteBlock(new byte[blocks * 3]);
        int blockLength = random.Next(0, 6);
        w.WriteByte((byte)blockLength);
        w.WriteBlock(new byte[blockLength]);
        StringArrayMarshaller.Write(ref w, RandomArray(random, RandomString));
        NullableIntListMarshaller.Write(ref w, RandomArray(random, r => r.Next(2) == 0 ? null : (int?)r.Next())?.ToList());
        StringListDictionaryMarshaller.Write(ref w, RandomArray(random, r => (Key: r.Next().ToString("x", null), Value: RandomArray(r, x => x.Next())?.ToList()))
            ?.DistinctBy(p => p.Key).ToDictionary(p => p.Key, p => p.Value));
        IntStringDictionaryMarshaller.Write(ref w, RandomArray(random, r => (Key: r.Next(), Value: RandomString(r)))?.DistinctBy(p => p.Key).ToDictionary(p => p.Key, p => p.Value));
        NullablePersonMarshaller.Write(ref w, random.Next(2) == 0 ? null : new Person(RandomString(random), random.Next(), null));
        GuidPersonDictionaryMarshaller.Write(ref w, random.Next(3) == 0 ? null : new() { [Guid.NewGuid()] = new Person("x", 1, DateTime.UnixEpoch), [Guid.Empty] = null });
        NodeMarshaller.Write(ref w, Node.Chain(random.Next(0, 4)));
        UnmanagedMemoryMarshaller<ushort>.Write(ref w, RandomArray(random, r => (ushort)r.Next()));
        UnmanagedArrayMarshaller<long>.Write(ref w, RandomArray(random, r => r.NextInt64()));
        UnmanagedListMarshaller<double>.Write(ref w, RandomArray(random, r => r.NextDouble())?.ToList());
        MemoryArrayMarshaller.Write(ref w, RandomArray(random, r => (ReadOnlyMemory<byte>)RandomArray(r, x => (byte)x.Next())));
        DictionaryListMarshaller.Write(ref w, random.Next(3) == 0 ? null : [null, new() { [1] = "a" }]);
        WriteGraphSample(ref w, random);
        w.WriteBoolean(random.Next(2) == 1);
    }

    /// <summary>Object graphs of every shape: lists, cycles, shared objects, known types, immutable objects, deferred set keys.</summary>
    private static void WriteGraphSample(ref MarshalWriter w, Random random)
    {
        ListNode? chain = ListNode.Chain(random.Next(0, 4));
        ListNodeMarshaller.Write(ref w, chain);
        ListNodeMarshaller.Write(ref w, random.Next(2) == 0 ? chain : null); // a back-reference across values
        var vertices = Enumerable.Range(0, random.Next(1, 4)).Select(i => new Vertex { Name = RandomString(random) }).ToArray();
        foreach (Vertex v in vertices)
        {
            v.Edges = [.. Enumerable.Range(0, random.Next(0, 3)).Select(_ => random.Next(4) == 0 ? null : vertices[random.Next(vertices.Length)])];
        }
        VertexMarshaller.Write(ref w, vertices[0]);
        var dog = new Dog { Name = RandomString(random), Barks = random.Next() };
        AnimalListMarshaller.Write(ref w, random.Next(4) == 0 ? null : [dog, new Cat { Name = "c", Friend = random.Next(2) == 0 ? dog : null }, null]);
        var knot = new Knot(RandomString(random) ?? "") { Node = chain, Next = random.Next(2) == 0 ? new Knot("n") : null };
        KnotMarshaller.Write(ref w, random.Next(4) == 0 ? null : knot);
        var tag = new Tag { Name = RandomString(random) ?? "" };
        TagBagMarshaller.Write(ref w, new TagBag { Favorite = tag, Tags = [tag, new Tag { Name = tag.Name + "+" }], Counts = new() { [tag] = random.Next() } });
        PairMarshaller.Write(ref w, new Pair { Left = chain, Right = random.Next(2) == 0 ? chain : new ListNode() });
        NodeImmutableArrayMarshaller.Write(ref w, random.Next(3) == 0 ? default : [chain, null]);
        HashSetMarshaller<int, UnmanagedMarshaller<int>>.Write(ref w, RandomArray(random, r => r.Next())?.ToHashSet());
        UnmanagedImmutableArrayMarshaller<short>.Write(ref w, RandomArray(random, r => (short)r.Next()) is { } shorts ? [.. shorts] : default);
    }

    private static void ReadGraphSample(ref MarshalReader r)
    {
        ListNodeMarshaller.Read(ref r);
        ListNodeMarshaller.Read(ref r);
        VertexMarshaller.Read(ref r);
        AnimalListMarshaller.Read(ref r);
        KnotMarshaller.Read(ref r);
        TagBagMarshaller.Read(ref r);
        PairMarshaller.Read(ref r);
        NodeImmutableArrayMarshaller.Read(ref r);
        HashSetMarshaller<int, UnmanagedMarshaller<int>>.Read(ref r);
        UnmanagedImmutableArrayMarshaller<short>.Read(ref r);
    }

    /// <summary>The fixed sequence of reads: every reader method and the generic marshallers, in the order
    /// <see cref="WriteSample"/> writes them; values are discarded.</summary>
    private static int ReadSequence(ref MarshalReader r)
    {
        r.ReadByte();
        r.ReadInt32();
        r.Read<long>();
        r.Read<double>();
        r.Read<decimal>();
        r.Read<Guid>();
        r.Read<DateTime>();
        r.Read<MixedStruct>();
        r.Read<char>();
        r.ReadBoolean();
        r.ReadPresence();
        r.ReadTag();
        r.ReadNullable<int>();
        r.ReadNullable<MixedStruct>();
        r.ReadString();
        r.ReadArray<int>();
        r.ReadArray<Guid>();
        r.ReadList<short>();
        int length = r.ReadLength();
        r.ReadBytesInPlace(length == WireFormat.NullLength ? 0 : length);
        int blocks = r.ReadLength(minElementSize: 3);
        r.ReadBytesInPlace(Math.Max(0, blocks) * 3);
        r.ReadBlock(new byte[r.ReadByte()]);
        StringArrayMarshaller.Read(ref r);
        NullableIntListMarshaller.Read(ref r);
        StringListDictionaryMarshaller.Read(ref r);
        IntStringDictionaryMarshaller.Read(ref r);
        NullablePersonMarshaller.Read(ref r);
        GuidPersonDictionaryMarshaller.Read(ref r);
        NodeMarshaller.Read(ref r);
        UnmanagedMemoryMarshaller<ushort>.Read(ref r);
        UnmanagedArrayMarshaller<long>.Read(ref r);
        UnmanagedListMarshaller<double>.Read(ref r);
        MemoryArrayMarshaller.Read(ref r);
        DictionaryListMarshaller.Read(ref r);
        ReadGraphSample(ref r);
        r.ReadBoolean();
        r.EnsureFullyConsumed();
        return 0;
    }

    /// <summary>Each reader method and marshaller on its own, so that short random inputs reach all of them.</summary>
    private static readonly (string Name, ReadFunc<int> Read)[] Probes =
    [
        ("Sequence", ReadSequence),
        ("Read<byte>", (ref MarshalReader r) => r.ReadByte()),
        ("ReadInt32", (ref MarshalReader r) => r.ReadInt32()),
        ("Read<long>+Read<decimal>", (ref MarshalReader r) => { r.Read<long>(); r.Read<decimal>(); return 0; }),
        ("Read<MixedStruct>", (ref MarshalReader r) => { r.Read<MixedStruct>(); return 0; }),
        ("ReadBoolean*", (ref MarshalReader r) => { while (r.Remaining > 0) { r.ReadBoolean(); } return 0; }),
        ("ReadPresence*", (ref MarshalReader r) => { while (r.Remaining > 0) { r.ReadPresence(); } return 0; }),
        ("ReadTag", (ref MarshalReader r) => r.ReadTag()),
        ("ReadNullable<int>*", (ref MarshalReader r) => { while (r.Remaining > 0) { r.ReadNullable<int>(); } return 0; }),
        ("ReadNullable<Guid>", (ref MarshalReader r) => { r.ReadNullable<Guid>(); return 0; }),
        ("ReadString*", (ref MarshalReader r) => { while (r.Remaining > 0) { r.ReadString(); } return 0; }),
        ("ReadArray<int>", (ref MarshalReader r) => r.ReadArray<int>()?.Length ?? 0),
        ("ReadArray<byte>*", (ref MarshalReader r) => { while (r.Remaining > 0) { r.ReadArray<byte>(); } return 0; }),
        ("ReadArray<MixedStruct>", (ref MarshalReader r) => r.ReadArray<MixedStruct>()?.Length ?? 0),
        ("ReadList<short>", (ref MarshalReader r) => r.ReadList<short>()?.Count ?? 0),
        ("ReadList<Guid>", (ref MarshalReader r) => r.ReadList<Guid>()?.Count ?? 0),
        ("ReadLength", (ref MarshalReader r) => r.ReadLength()),
        ("ReadLength(5)", (ref MarshalReader r) => r.ReadLength(minElementSize: 5)),
        ("ReadBytesInPlace(ReadInt32)", (ref MarshalReader r) => r.ReadBytesInPlace(r.ReadInt32()).Length),
        ("ReadBlock(ReadByte)", (ref MarshalReader r) => { r.ReadBlock(new byte[r.ReadByte()]); return 0; }),
        ("EnsureFullyConsumed", (ref MarshalReader r) => { r.ReadByte(); r.EnsureFullyConsumed(); return 0; }),
        ("EnterObject(ReadByte)", (ref MarshalReader r) =>
        {
            int depth = r.ReadByte();
            for (int i = 0; i < depth; i++)
            {
                r.EnterObject();
            }
            return 0;
        }),
        ("StringMarshaller", (ref MarshalReader r) => StringMarshaller.Read(ref r)?.Length ?? 0),
        ("UnmanagedMarshaller<DateTime>", (ref MarshalReader r) => { UnmanagedMarshaller<DateTime>.Read(ref r); return 0; }),
        ("NullableMarshaller<long>", (ref MarshalReader r) => { NullableMarshaller<long>.Read(ref r); return 0; }),
        ("ArrayMarshaller<string>", (ref MarshalReader r) => StringArrayMarshaller.Read(ref r)?.Length ?? 0),
        ("ArrayMarshaller<int,UnmanagedMarshaller>", (ref MarshalReader r) => ArrayMarshaller<int, UnmanagedMarshaller<int>>.Read(ref r)?.Length ?? 0),
        ("ListMarshaller<int?>", (ref MarshalReader r) => NullableIntListMarshaller.Read(ref r)?.Count ?? 0),
        ("ListMarshaller<string>", (ref MarshalReader r) => ListMarshaller<string?, StringMarshaller>.Read(ref r)?.Count ?? 0),
        ("DictionaryMarshaller<string,List<int>>", (ref MarshalReader r) => StringListDictionaryMarshaller.Read(ref r)?.Count ?? 0),
        ("DictionaryMarshaller<int,string>", (ref MarshalReader r) => IntStringDictionaryMarshaller.Read(ref r)?.Count ?? 0),
        ("DictionaryMarshaller<byte,byte>", (ref MarshalReader r) => DictionaryMarshaller<byte, UnmanagedMarshaller<byte>, byte, UnmanagedMarshaller<byte>>.Read(ref r)?.Count ?? 0),
        ("DictionaryMarshaller<decimal,double>", (ref MarshalReader r) => DictionaryMarshaller<decimal, UnmanagedMarshaller<decimal>, double, UnmanagedMarshaller<double>>.Read(ref r)?.Count ?? 0),
        ("DictionaryMarshaller<Guid,Person?>", (ref MarshalReader r) => GuidPersonDictionaryMarshaller.Read(ref r)?.Count ?? 0),
        ("NullableValueMarshaller<Person>", (ref MarshalReader r) => NullablePersonMarshaller.Read(ref r)?.Age ?? 0),
        ("NodeMarshaller", (ref MarshalReader r) => NodeMarshaller.Read(ref r)?.Value ?? 0),
        ("UnmanagedArrayMarshaller<long>", (ref MarshalReader r) => UnmanagedArrayMarshaller<long>.Read(ref r)?.Length ?? 0),
        ("UnmanagedListMarshaller<double>", (ref MarshalReader r) => UnmanagedListMarshaller<double>.Read(ref r)?.Count ?? 0),
        ("UnmanagedMemoryMarshaller<ushort>", (ref MarshalReader r) => UnmanagedMemoryMarshaller<ushort>.Read(ref r).Length),
        ("ArrayMarshaller<ReadOnlyMemory<byte>>", (ref MarshalReader r) => MemoryArrayMarshaller.Read(ref r)?.Length ?? 0),
        ("ListMarshaller<Dictionary<int,string>>", (ref MarshalReader r) => DictionaryListMarshaller.Read(ref r)?.Count ?? 0),
        ("Graph sample", (ref MarshalReader r) => { ReadGraphSample(ref r); return 0; }),
        ("ListNodeMarshaller*", (ref MarshalReader r) => { while (r.Remaining > 0) { ListNodeMarshaller.Read(ref r); } return 0; }),
        ("VertexMarshaller", (ref MarshalReader r) => VertexMarshaller.Read(ref r)?.Edges.Count ?? 0),
        ("AnimalMarshaller*", (ref MarshalReader r) => { while (r.Remaining > 0) { AnimalMarshaller.Read(ref r); } return 0; }),
        ("ListMarshaller<Animal>", (ref MarshalReader r) => AnimalListMarshaller.Read(ref r)?.Count ?? 0),
        ("KnotMarshaller", (ref MarshalReader r) => KnotMarshaller.Read(ref r)?.Name.Length ?? 0),
        ("TagBagMarshaller", (ref MarshalReader r) => TagBagMarshaller.Read(ref r)?.Tags.Count ?? 0),
        ("PairMarshaller", (ref MarshalReader r) => PairMarshaller.Read(ref r)?.Left?.Value ?? 0),
        ("ImmutableArrayMarshaller<ListNode>", (ref MarshalReader r) => NodeImmutableArrayMarshaller.Read(ref r) is { IsDefault: false } a ? a.Length : -1),
        ("HashSetMarshaller<int>", (ref MarshalReader r) => HashSetMarshaller<int, UnmanagedMarshaller<int>>.Read(ref r)?.Count ?? 0),
        ("PositiveMarshaller*", (ref MarshalReader r) => { while (r.Remaining > 0) { PositiveMarshaller.Read(ref r); } return 0; }),
        ("UnmanagedImmutableArrayMarshaller<short>", (ref MarshalReader r) => UnmanagedImmutableArrayMarshaller<short>.Read(ref r) is { IsDefault: false } a ? a.Length : -1),
    ];

    private static string? RandomString(Random random)
    {
        int length = random.Next(-1, 10);
        return length < 0 ? null : new string([.. Enumerable.Range(0, length).Select(_ => (char)random.Next(0x10000))]);
    }

    private static T[]? RandomArray<T>(Random random, Func<Random, T> element)
    {
        int length = random.Next(-1, 6);
        return length < 0 ? null : [.. Enumerable.Range(0, length).Select(_ => element(random))];
    }

    /// <summary>Runs <paramref name="read"/> over <paramref name="input"/>: it must succeed (returns true) or
    /// raise a protocol error (returns false).</summary>
    private static bool AssertOnlyProtocolErrors(byte[] input, string probe, ReadFunc<int> read, MarshalLimits? limits, int chunkSeed)
    {
        try
        {
            if (chunkSeed < 0)
            {
                var reader = new MarshalReader(input, limits);
                read(ref reader);
            }
            else
            {
                var random = new Random(chunkSeed);
                var chunks = new ChunkedInput(input, random.Next(0, Math.Min(input.Length, 8) + 1), random, 1 + chunkSeed % 8);
                var reader = new MarshalReader(chunks.First, input.Length, chunks, limits);
                read(ref reader);
            }
            return true;
        }
        catch (XCallProtocolException)
        {
            return false;
        }
        catch (Exception e)
        {
            Assert.Fail($"{probe} ({(chunkSeed < 0 ? "one span" : $"chunks, seed {chunkSeed}")}, {(limits is null ? "default" : "tight")} limits) " +
                $"raised {e.GetType().FullName} instead of XCallProtocolException on input [{Convert.ToHexString(input)}]:{Environment.NewLine}{e}");
            return false;
        }
    }

    private static byte[] RandomInput(Random random)
    {
        var bytes = new byte[random.Next(0, 65)];
        if (random.Next(2) == 0)
        {
            random.NextBytes(bytes);
        }
        else
        {
            // Biased towards the bytes that make valid tags and small lengths, so reads get further.
            for (int i = 0; i < bytes.Length; i++)
            {
                bytes[i] = random.Next(6) switch
                {
                    0 => 0,
                    1 => 1,
                    2 => 0xFF,
                    3 => (byte)random.Next(2, 9),
                    4 => 0,
                    _ => (byte)random.Next(256),
                };
            }
        }
        return bytes;
    }

    private static readonly int[] InterestingInts = [-1, -2, 0, 1, 2, 3, 7, 8, 9, 255, 256, 65_536, 1 << 30, int.MaxValue, int.MinValue, -256];

    private static byte[] Mutate(byte[] valid, Random random)
    {
        var bytes = new List<byte>(valid);
        int mutations = random.Next(1, 4);
        for (int m = 0; m < mutations; m++)
        {
            switch (random.Next(7))
            {
                case 0 when bytes.Count > 0: // bit flip
                    int i = random.Next(bytes.Count);
                    bytes[i] ^= (byte)(1 << random.Next(8));
                    break;
                case 1 when bytes.Count > 0: // truncation
                    int cut = random.Next(bytes.Count);
                    bytes.RemoveRange(cut, bytes.Count - cut);
                    break;
                case 2: // insertion of random bytes
                    var inserted = new byte[random.Next(1, 9)];
                    random.NextBytes(inserted);
                    bytes.InsertRange(random.Next(bytes.Count + 1), inserted);
                    break;
                case 3 when bytes.Count > 0: // deletion of a range
                    int start = random.Next(bytes.Count);
                    bytes.RemoveRange(start, Math.Min(bytes.Count - start, random.Next(1, 9)));
                    break;
                case 4 when bytes.Count >= 4: // an interesting length over 4 bytes
                    int at = random.Next(bytes.Count - 3);
                    byte[] value = BitConverter.GetBytes(InterestingInts[random.Next(InterestingInts.Length)]);
                    for (int k = 0; k < 4; k++)
                    {
                        bytes[at + k] = value[k];
                    }
                    break;
                case 5 when bytes.Count > 0: // an interesting byte (tags)
                    bytes[random.Next(bytes.Count)] = (byte)(random.Next(3) switch { 0 => 2, 1 => 0xFF, _ => random.Next(256) });
                    break;
                default: // append
                    bytes.Add((byte)random.Next(256));
                    break;
            }
        }
        return [.. bytes];
    }

    [Fact]
    public void Valid_samples_are_read_completely_by_the_fuzz_sequence()
    {
        var random = new Random(1);
        for (int i = 0; i < 200; i++)
        {
            byte[] sample = Wire.Encode((ref MarshalWriter w) => WriteSample(ref w, random));
            Assert.Equal(0, Wire.Decode(sample, ReadSequence));
            Assert.Equal(0, Wire.DecodeChunked(sample, ReadSequence, seed: i, maxChunk: 1 + i % 9));
        }
    }

    [Fact]
    public void Random_byte_strings_raise_only_protocol_errors()
    {
        var random = new Random(0x5EED);
        for (int i = 0; i < 20_000; i++)
        {
            byte[] input = RandomInput(random);
            MarshalLimits? limits = i % 2 == 0 ? null : Tight;
            AssertOnlyProtocolErrors(input, "Sequence", ReadSequence, limits, chunkSeed: -1);
            if (i % 4 == 0)
            {
                AssertOnlyProtocolErrors(input, "Sequence", ReadSequence, limits, chunkSeed: i);
            }
            // Short random inputs rarely get past the first reads of the sequence, so each input also goes to
            // a rotating set of probes that start with one reader method each: every probe sees thousands of inputs.
            for (int p = 0; p < ProbesPerInput; p++)
            {
                (string name, ReadFunc<int> read) = Probes[(i * ProbesPerInput + p) % Probes.Length];
                AssertOnlyProtocolErrors(input, name, read, limits, chunkSeed: p == 0 && i % 3 == 0 ? i : -1);
            }
        }
    }

    [Fact]
    public void Mutated_valid_payloads_raise_only_protocol_errors()
    {
        var random = new Random(0xF022);
        byte[][] samples = [.. Enumerable.Range(0, 64).Select(_ => Wire.Encode((ref MarshalWriter w) => WriteSample(ref w, random)))];
        int accepted = 0;
        for (int i = 0; i < 20_000; i++)
        {
            byte[] input = Mutate(samples[i % samples.Length], random);
            MarshalLimits? limits = i % 3 == 0 ? Tight : null;
            bool read = AssertOnlyProtocolErrors(input, "Sequence", ReadSequence, limits, chunkSeed: -1);
            Assert.Equal(read, AssertOnlyProtocolErrors(input, "Sequence", ReadSequence, limits, chunkSeed: i));
            accepted += read ? 1 : 0;
            // Each probe also starts at a random offset of the mutated payload, where real lengths and tags lie.
            (string name, ReadFunc<int> probe) = Probes[1 + i % (Probes.Length - 1)];
            byte[] tail = input[random.Next(input.Length + 1)..];
            AssertOnlyProtocolErrors(tail, name, probe, limits, chunkSeed: -1);
        }
        // The mutations must leave some payloads readable (so reads get deep) and break most of them.
        Assert.InRange(accepted, 100, 10_000);
    }

    [Fact]
    public void Every_truncation_of_valid_payloads_raises_only_protocol_errors()
    {
        var random = new Random(77);
        for (int s = 0; s < 8; s++)
        {
            byte[] sample = Wire.Encode((ref MarshalWriter w) => WriteSample(ref w, random));
            for (int length = 0; length < sample.Length; length++)
            {
                byte[] prefix = sample[..length];
                var e = Assert.Throws<XCallProtocolException>(() =>
                {
                    var reader = new MarshalReader(prefix);
                    ReadSequence(ref reader);
                });
                Assert.NotEmpty(e.Message);
            }
        }
    }

    [Fact]
    public void Fuzz_failure_message_names_the_input_in_hex()
    {
        // The helper itself must report a foreign exception with the input; otherwise the fuzz tests could not fail usefully.
        var e = Assert.ThrowsAny<Exception>(() => AssertOnlyProtocolErrors([0xDE, 0xAD], "probe", (ref MarshalReader r) => throw new InvalidOperationException("boom"), null, -1));
        Assert.Contains("DEAD", e.Message);
        Assert.Contains("InvalidOperationException", e.Message);
        AssertOnlyProtocolErrors([0xDE, 0xAD], "probe", (ref MarshalReader r) => throw new XCallProtocolException("fine"), null, -1);
    }
}
