using System.Collections.Immutable;

namespace XCall.Marshal.Tests;

using VertexListMarshaller = ListMarshaller<Vertex?, VertexMarshaller>;
using AnimalListMarshaller = ListMarshaller<Animal?, AnimalMarshaller>;
using NodeArrayMarshaller = ArrayMarshaller<ListNode?, ListNodeMarshaller>;
using NodeImmutableArrayMarshaller = ImmutableArrayMarshaller<ListNode?, ListNodeMarshaller>;
#pragma warning disable CS8631 // StringMarshaller (IMarshaller<string?>) as a dictionary key marshaller.
using NodeListsByNameMarshaller = DictionaryMarshaller<string, StringMarshaller, List<ListNode?>?, ListMarshaller<ListNode?, ListNodeMarshaller>>;
#pragma warning restore CS8631

/// <summary>The object-graph format: identity within a message, cycles, depth, known types, and strict reading.</summary>
public sealed class GraphTests
{
    private static T? RoundTrip<T, TMarshaller>(T? value) where TMarshaller : IMarshaller<T?>
    {
        byte[] bytes = Wire.Encode((ref MarshalWriter w) => TMarshaller.Write(ref w, value));
        T? fromSpan = Wire.Decode(bytes, (ref MarshalReader r) => TMarshaller.Read(ref r));
        // The chunked reader must build the same graph; the one-span result is what the test inspects.
        Wire.DecodeChunked(bytes, (ref MarshalReader r) => TMarshaller.Read(ref r), seed: bytes.Length, maxChunk: 7);
        return fromSpan;
    }

    [Fact]
    public void Cycle_between_two_objects_arrives_as_a_cycle()
    {
        var a = new Vertex { Name = "a" };
        var b = new Vertex { Name = "b", Edges = [a] };
        a.Edges = [b];

        Vertex a2 = RoundTrip<Vertex, VertexMarshaller>(a)!;

        Vertex b2 = a2.Edges[0]!;
        Assert.Equal(("a", "b"), (a2.Name, b2.Name));
        Assert.Same(a2, b2.Edges[0]);
        Assert.NotSame(a, a2);
    }

    [Fact]
    public void Cycle_is_written_as_tags_bodies_in_order_and_a_back_reference()
    {
        var a = new Vertex { Name = "a" };
        var b = new Vertex { Name = "b", Edges = [a] };
        a.Edges = [b];

        byte[] bytes = Wire.Encode((ref MarshalWriter w) => VertexMarshaller.Write(ref w, a));

        // a: new (id 0); a's body: "a", one edge: b new (id 1); then b's body: "b", one edge: back-reference 0.
        Assert.Equal(
            "01" + "01000000" + "6100" + "01000000" + "01" +
            "01000000" + "6200" + "01000000" + "02" + "00000000",
            Wire.Hex(bytes));
    }

    [Fact]
    public void Self_reference_arrives_as_the_same_object()
    {
        var v = new Vertex { Name = "self" };
        v.Edges = [v, null, v];

        Vertex v2 = RoundTrip<Vertex, VertexMarshaller>(v)!;

        Assert.Same(v2, v2.Edges[0]);
        Assert.Null(v2.Edges[1]);
        Assert.Same(v2, v2.Edges[2]);
    }

    [Fact]
    public void Diamond_members_sharing_one_object_arrive_sharing_one_object()
    {
        var shared = new ListNode { Value = 7, Next = new ListNode { Value = 8 } };
        var pair = new Pair { Left = shared, Right = shared };

        Pair pair2 = RoundTrip<Pair, PairMarshaller>(pair)!;

        Assert.Same(pair2.Left, pair2.Right);
        Assert.Equal((7, 8), (pair2.Left!.Value, pair2.Left.Next!.Value));
    }

    [Fact]
    public void Object_in_two_top_level_values_of_one_message_arrives_once()
    {
        var node = new ListNode { Value = 3 };
        byte[] bytes = Wire.Encode((ref MarshalWriter w) =>
        {
            ListNodeMarshaller.Write(ref w, node);
            NodeArrayMarshaller.Write(ref w, [node, new ListNode { Value = 4 }, node]);
        });

        (ListNode first, ListNode?[] array) = Wire.Decode(bytes, (ref MarshalReader r) => (ListNodeMarshaller.Read(ref r)!, NodeArrayMarshaller.Read(ref r)!));

        Assert.Same(first, array[0]);
        Assert.Same(first, array[2]);
        Assert.Equal(4, array[1]!.Value);
    }

    [Fact]
    public void A_flush_ends_the_message_graph_and_ids_continue()
    {
        var node = new ListNode { Value = 1 };
        var output = new ArrayBufferWriter<byte>();
        var writer = new MarshalWriter(output);
        ListNodeMarshaller.Write(ref writer, node);
        writer.Flush();
        ListNodeMarshaller.Write(ref writer, node);
        ListNodeMarshaller.Write(ref writer, node);
        writer.Flush();

        // After the flush the node is new again (id 1), and the back-reference names id 1, not id 0.
        Assert.Equal("01" + "01000000" + "00" + "01" + "01000000" + "00" + "02" + "01000000", Wire.Hex(output.WrittenSpan));
        (ListNode a, ListNode b, ListNode c) = Wire.Decode(output.WrittenSpan, (ref MarshalReader r) => (ListNodeMarshaller.Read(ref r)!, ListNodeMarshaller.Read(ref r)!, ListNodeMarshaller.Read(ref r)!));
        Assert.NotSame(a, b);
        Assert.Same(b, c);
    }

    [Fact]
    public void Million_node_list_round_trips_without_recursion()
    {
        const int Count = 1_000_000;
        ListNode head = ListNode.Chain(Count)!;

        byte[] bytes = Wire.Encode((ref MarshalWriter w) => ListNodeMarshaller.Write(ref w, head));
        ListNode? copy = Wire.Decode(bytes, (ref MarshalReader r) => ListNodeMarshaller.Read(ref r));
        ListNode? chunked = Wire.DecodeChunked(bytes, (ref MarshalReader r) => ListNodeMarshaller.Read(ref r), seed: 3, maxChunk: 1 << 16);

        // Per node: the tag and the int32 value; the last Next is a null tag.
        Assert.Equal((Count * 5) + 1, bytes.Length);
        foreach (ListNode? list in new[] { copy, chunked })
        {
            int expected = 0;
            int wrong = 0;
            for (ListNode? node = list; node is not null; node = node.Next)
            {
                wrong += node.Value == expected++ ? 0 : 1;
            }
            Assert.Equal((Count, 0), (expected, wrong));
        }
    }

    [Fact]
    public void Many_objects_referenced_many_times_keep_their_identity_message_after_message()
    {
        // Enough objects for the writer's identity map and the reader's table to grow several times; every
        // vertex points to itself, its predecessor and a pseudo-random earlier vertex, so most references are
        // back-references to objects far apart in the map.
        const int Count = 20_000;
        var vertices = new Vertex[Count];
        var random = new Random(5);
        for (int i = 0; i < Count; i++)
        {
            vertices[i] = new Vertex { Name = "v" + i };
            vertices[i].Edges = [vertices[i], vertices[Math.Max(0, i - 1)], vertices[random.Next(i + 1)]];
        }
        var root = new Vertex { Name = "root", Edges = [.. vertices] };
        Dictionary<Vertex, int> originalIndex = IndexByIdentity(vertices);

        // Twice, so the second message reuses this thread's pooled graph states.
        for (int message = 0; message < 2; message++)
        {
            Vertex copy = RoundTrip<Vertex, VertexMarshaller>(root)!;

            Assert.Equal(Count, copy.Edges.Count);
            Dictionary<Vertex, int> index = IndexByIdentity(copy.Edges!);
            int wrong = 0;
            for (int i = 0; i < Count; i++)
            {
                Vertex original = vertices[i];
                Vertex copied = copy.Edges[i]!;
                wrong += copied.Name == original.Name ? 0 : 1;
                for (int e = 0; e < original.Edges.Count; e++)
                {
                    wrong += index.TryGetValue(copied.Edges[e]!, out int actual) && actual == originalIndex[original.Edges[e]!] ? 0 : 1;
                }
            }
            Assert.Equal(0, wrong);
        }

        static Dictionary<Vertex, int> IndexByIdentity(IReadOnlyList<Vertex> items)
        {
            var index = new Dictionary<Vertex, int>(ReferenceEqualityComparer.Instance);
            for (int i = 0; i < items.Count; i++)
            {
                index.Add(items[i], i);
            }
            return index;
        }
    }

    [Fact]
    public void Polymorphic_list_keeps_runtime_types_with_their_type_ids()
    {
        var dog = new Dog { Name = "rex", Barks = 3 };
        var cat = new Cat { Name = "tom", Friend = dog };
        List<Animal?> animals = [dog, cat, null];

        byte[] bytes = Wire.Encode((ref MarshalWriter w) => AnimalListMarshaller.Write(ref w, animals));
        List<Animal?> back = Wire.Decode(bytes, (ref MarshalReader r) => AnimalListMarshaller.Read(ref r))!;

        Dog dog2 = Assert.IsType<Dog>(back[0]);
        Cat cat2 = Assert.IsType<Cat>(back[1]);
        Assert.Null(back[2]);
        Assert.Equal(("rex", 3, "tom"), (dog2.Name, dog2.Barks, cat2.Name));
        Assert.Same(dog2, cat2.Friend);
        Assert.Equal(
            "03000000" +
            "03" + "0100" + "03000000" + "720065007800" + "03000000" +
            "03" + "0700" + "03000000" + "74006F006D00" + "02" + "00000000" +
            "00",
            Wire.Hex(bytes));
    }

    [Fact]
    public void Runtime_type_missing_from_the_known_types_is_refused_naming_the_type_and_the_fix()
    {
        var e = Assert.Throws<XCallException>(() => Wire.Encode((ref MarshalWriter w) => AnimalListMarshaller.Write(ref w, [new Dog(), new Fox()])));

        Assert.Contains(typeof(Fox).FullName!, e.Message);
        Assert.Contains("[XCallKnownType(typeof(Fox), id)]", e.Message);
        Assert.Contains("'Animal'", e.Message);
    }

    [Fact]
    public void Immutable_objects_are_built_after_their_members_and_share_mutable_ones()
    {
        ListNode shared = ListNode.Chain(3)!;
        var inner = new Knot("inner") { Node = shared };
        var outer = new Knot("outer") { Next = inner, Node = shared };

        Knot outer2 = RoundTrip<Knot, KnotMarshaller>(outer)!;

        Assert.Equal(("outer", "inner"), (outer2.Name, outer2.Next!.Name));
        Assert.Same(outer2.Node, outer2.Next.Node);
        Assert.Equal(2, outer2.Node!.Next!.Next!.Value);
    }

    [Fact]
    public void Immutable_object_shared_after_it_is_built_arrives_once()
    {
        var knot = new Knot("k");
        var a = new Knot("a") { Next = knot };
        byte[] bytes = Wire.Encode((ref MarshalWriter w) =>
        {
            KnotMarshaller.Write(ref w, a);
            KnotMarshaller.Write(ref w, knot);
        });

        (Knot a2, Knot knot2) = Wire.Decode(bytes, (ref MarshalReader r) => (KnotMarshaller.Read(ref r)!, KnotMarshaller.Read(ref r)!));

        Assert.Same(a2.Next, knot2);
    }

    [Fact]
    public void Cycle_through_immutable_objects_only_is_refused_by_the_writer()
    {
        var a = new Knot("a");
        var b = new Knot("b") { Next = a };
        a.Next = b;

        var e = Assert.Throws<XCallException>(() => Wire.Encode((ref MarshalWriter w) => KnotMarshaller.Write(ref w, a)));

        Assert.Contains(typeof(Knot).FullName!, e.Message);
        Assert.Contains("immutable", e.Message);
    }

    [Fact]
    public void Immutable_nesting_deeper_than_the_limit_is_refused_by_the_writer()
    {
        Knot deep = new("0");
        for (int i = 1; i <= MarshalLimits.Default.MaxDepth; i++)
        {
            deep = new Knot(i.ToString(System.Globalization.CultureInfo.InvariantCulture)) { Next = deep };
        }

        Assert.Throws<XCallException>(() => Wire.Encode((ref MarshalWriter w) => KnotMarshaller.Write(ref w, deep)));
    }

    [Fact]
    public void Hash_set_and_dictionary_of_mutable_value_equal_objects_are_filled_after_their_members()
    {
        var x = new Tag { Name = "x" };
        var y = new Tag { Name = "y" };
        var bag = new TagBag { Favorite = x, Tags = [x, y, null], Counts = new() { [x] = 3, [y] = 4 } };

        TagBag bag2 = RoundTrip<TagBag, TagBagMarshaller>(bag)!;

        Assert.Contains(new Tag { Name = "x" }, bag2.Tags);
        Assert.Contains(new Tag { Name = "y" }, bag2.Tags);
        Assert.Contains(null, bag2.Tags);
        Assert.Same(bag2.Favorite, bag2.Tags.Single(t => t?.Name == "x"));
        Assert.Equal(3, bag2.Counts[new Tag { Name = "x" }]);
        Assert.Same(bag2.Favorite, bag2.Counts.Keys.Single(t => t.Name == "x"));
    }

    [Fact]
    public void Hash_set_of_distinct_objects_that_read_back_equal_is_a_protocol_error()
    {
        // Two new tags with the same name in one set: distinct objects, equal once filled.
        byte[] bytes = Wire.Encode((ref MarshalWriter w) => TagBagMarshaller.Write(ref w, new TagBag { Tags = [new Tag { Name = "same" }] }));
        byte[] tampered = Wire.Encode((ref MarshalWriter w) =>
        {
            w.WriteByte(WireFormat.NewObject); // the bag
            w.WriteByte(WireFormat.Null); // Favorite
            w.WriteLength(2);
            w.WriteByte(WireFormat.NewObject);
            w.WriteByte(WireFormat.NewObject);
            w.WriteLength(0); // Counts
            w.WriteString("same");
            w.WriteString("same");
        });

        Assert.Single(Wire.Decode(bytes, (ref MarshalReader r) => TagBagMarshaller.Read(ref r))!.Tags);
        Wire.AssertRejectedBothWays(tampered, (ref MarshalReader r) => TagBagMarshaller.Read(ref r));
    }

    [Fact]
    public void Dictionary_of_lists_of_objects_keeps_sharing_across_entries()
    {
        var shared = new ListNode { Value = 1 };
        var value = new Dictionary<string, List<ListNode?>?> { ["a"] = [shared, null], ["b"] = [shared], ["c"] = null };

        Dictionary<string, List<ListNode?>?> back = RoundTrip<Dictionary<string, List<ListNode?>?>, NodeListsByNameMarshaller>(value)!;

        Assert.Same(back["a"]![0], back["b"]![0]);
        Assert.Null(back["a"]![1]);
        Assert.Null(back["c"]);
    }

    [Fact]
    public void Hash_sets_round_trip_with_null_distinct_from_empty()
    {
        HashSet<int> ints = [1, 5, -3];
        HashSet<string?> strings = ["a", null, ""];

        Assert.Equal(ints, RoundTrip<HashSet<int>, HashSetMarshaller<int, UnmanagedMarshaller<int>>>(ints));
        Assert.Equal(strings, RoundTrip<HashSet<string?>, HashSetMarshaller<string?, StringMarshaller>>(strings));
        Assert.Empty(RoundTrip<HashSet<int>, HashSetMarshaller<int, UnmanagedMarshaller<int>>>([])!);
        Assert.Null(RoundTrip<HashSet<int>, HashSetMarshaller<int, UnmanagedMarshaller<int>>>(null));
        Wire.AssertRejectedBothWays(Wire.Encode((ref MarshalWriter w) =>
        {
            w.WriteLength(2);
            w.WriteInt32(9);
            w.WriteInt32(9);
        }), (ref MarshalReader r) => HashSetMarshaller<int, UnmanagedMarshaller<int>>.Read(ref r));
    }

    [Fact]
    public void Immutable_arrays_round_trip_with_default_distinct_from_empty()
    {
        ImmutableArray<int> ints = [1, 2, 3];
        byte[] block = Wire.RoundTrip<ImmutableArray<int>, UnmanagedImmutableArrayMarshaller<int>>(ints, assertEqual: (e, a) => Assert.Equal(e.AsEnumerable(), a.AsEnumerable()));
        Assert.Equal(Wire.Encode((ref MarshalWriter w) => w.WriteArray<int>([1, 2, 3])), block);
        Assert.True(Wire.Decode(Wire.Encode((ref MarshalWriter w) => UnmanagedImmutableArrayMarshaller<int>.Write(ref w, default)), (ref MarshalReader r) => UnmanagedImmutableArrayMarshaller<int>.Read(ref r)).IsDefault);
        Assert.True(Wire.Decode(Wire.Encode((ref MarshalWriter w) => UnmanagedImmutableArrayMarshaller<int>.Write(ref w, [])), (ref MarshalReader r) => UnmanagedImmutableArrayMarshaller<int>.Read(ref r)) is { IsDefault: false, IsEmpty: true });

        var node = new ListNode { Value = 2 };
        byte[] bytes = Wire.Encode((ref MarshalWriter w) => NodeImmutableArrayMarshaller.Write(ref w, [node, node]));
        ImmutableArray<ListNode?> nodes = Wire.Decode(bytes, (ref MarshalReader r) => NodeImmutableArrayMarshaller.Read(ref r));
        Assert.Same(nodes[0], nodes[1]);
        Assert.True(Wire.Decode(Wire.Encode((ref MarshalWriter w) => NodeImmutableArrayMarshaller.Write(ref w, default)), (ref MarshalReader r) => NodeImmutableArrayMarshaller.Read(ref r)).IsDefault);
    }

    [Fact]
    public void Writing_and_reading_one_small_object_allocates_only_the_object()
    {
        var node = new ListNode { Value = 42 };
        var buffer = new byte[64];
        ListNode? last = null;
        void Once()
        {
            var writer = new MarshalWriter(buffer);
            ListNodeMarshaller.Write(ref writer, node);
            writer.Flush();
            var reader = new MarshalReader(buffer.AsSpan(0, (int)writer.BytesWritten));
            last = ListNodeMarshaller.Read(ref reader);
            reader.EnsureFullyConsumed();
        }
        Once(); // the graph states of this thread

        const int Rounds = 1000;
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < Rounds; i++)
        {
            Once();
        }
        long perRound = (GC.GetAllocatedBytesForCurrentThread() - before) / Rounds;

        Assert.Equal(42, last!.Value);
        Assert.InRange(perRound, 1, 32); // one ListNode: header, method table, int, reference
    }

    // ---------------------------------------------------------------- malformed graphs

    public static TheoryData<string, string> MalformedNodes => new()
    {
        { "tag 4", "04" },
        { "tag 255", "FF" },
        { "back-reference before any object", "02" + "00000000" },
        { "back-reference past the objects read", "01" + "05000000" + "02" + "05000000" },
        { "forward back-reference", "01" + "05000000" + "02" + "01000000" },
        { "negative back-reference", "01" + "05000000" + "02" + "FFFFFFFF" },
        { "known-type tag for a type without known types", "03" + "0100" },
        { "truncated back-reference", "01" + "05000000" + "02" + "0000" },
        { "truncated body", "01" + "0500" },
        { "bad tag in a body", "01" + "05000000" + "07" },
    };

    [Theory]
    [MemberData(nameof(MalformedNodes))]
    public void Malformed_list_payload_is_a_protocol_error(string what, string hex)
    {
        XCallProtocolException e = Wire.AssertRejected(Convert.FromHexString(hex), (ref MarshalReader r) => ListNodeMarshaller.Read(ref r));
        Wire.AssertRejectedChunked(Convert.FromHexString(hex), (ref MarshalReader r) => ListNodeMarshaller.Read(ref r));
        Assert.False(string.IsNullOrEmpty(e.Message), what);
    }

    [Fact]
    public void Constructor_rejecting_the_payload_is_a_protocol_error()
    {
        Assert.Equal(5, Wire.Decode(Convert.FromHexString("01" + "05000000"), (ref MarshalReader r) => PositiveMarshaller.Read(ref r))!.Value);

        XCallProtocolException e = Wire.AssertRejected(Convert.FromHexString("01" + "FBFFFFFF"), (ref MarshalReader r) => PositiveMarshaller.Read(ref r));

        Assert.IsType<ArgumentOutOfRangeException>(e.InnerException);
        Assert.Contains(typeof(Positive).FullName!, e.Message);
    }

    [Fact]
    public void Unknown_type_id_is_a_protocol_error_naming_the_id()
    {
        XCallProtocolException e = Wire.AssertRejected(Convert.FromHexString("03" + "6300"), (ref MarshalReader r) => AnimalMarshaller.Read(ref r));
        Assert.Contains("99", e.Message);
        Assert.Contains(typeof(Animal).FullName!, e.Message);
    }

    [Fact]
    public void New_object_tag_for_an_abstract_type_is_a_protocol_error()
    {
        Wire.AssertRejectedBothWays(Convert.FromHexString("01"), (ref MarshalReader r) => AnimalMarshaller.Read(ref r));
    }

    [Fact]
    public void Back_reference_to_an_object_of_another_type_is_a_protocol_error()
    {
        // A pair (id 0) whose Left is a new node (id 1) and whose Right names the pair itself.
        byte[] bytes = Convert.FromHexString("01" + "01" + "02" + "00000000" + "05000000" + "00");
        XCallProtocolException e = Wire.AssertRejected(bytes, (ref MarshalReader r) => PairMarshaller.Read(ref r));
        Assert.Contains(typeof(Pair).FullName!, e.Message);
        Assert.Contains(typeof(ListNode).FullName!, e.Message);
    }

    [Fact]
    public void Back_reference_to_an_immutable_object_under_construction_is_a_protocol_error()
    {
        // A knot (id 0) named "k" whose Next names itself before it is built.
        byte[] bytes = Convert.FromHexString("01" + "01000000" + "6B00" + "02" + "00000000" + "00");
        XCallProtocolException e = Wire.AssertRejected(bytes, (ref MarshalReader r) => KnotMarshaller.Read(ref r));
        Wire.AssertRejectedChunked(bytes, (ref MarshalReader r) => KnotMarshaller.Read(ref r));
        Assert.Contains("immutable", e.Message);
    }

    [Fact]
    public void Immutable_nesting_deeper_than_the_reader_limit_is_a_protocol_error()
    {
        Knot deep = new("0");
        for (int i = 1; i < 10; i++)
        {
            deep = new Knot("x") { Next = deep };
        }
        byte[] bytes = Wire.Encode((ref MarshalWriter w) => KnotMarshaller.Write(ref w, deep));

        Wire.AssertRejectedBothWays(bytes, (ref MarshalReader r) => KnotMarshaller.Read(ref r), new MarshalLimits { MaxDepth = 4 });
        Assert.Equal("x", Wire.Decode(bytes, (ref MarshalReader r) => KnotMarshaller.Read(ref r))!.Name);
    }
}
