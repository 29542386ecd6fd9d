namespace XCall.Marshal.Tests;

/// <summary>
/// A cycle made only of objects that compare by value (records) is refused: hashing one (a hash set or
/// dictionary key), comparing or printing it would recurse around the cycle until the stack overflows, which
/// ends the process. The reader refuses it as a protocol error; the writer refuses to send it, so the one
/// message fails instead of the connection (the readers' tests forge their payloads with
/// <see cref="ForgedValueNodeMarshaller"/>, which does not tell the writer the type compares by value).
/// Cycles through objects with reference equality, and shared objects that form no cycle, still read.
/// </summary>
public sealed class ValueCycleTests
{
    [Fact]
    public void A_record_that_refers_to_itself_in_a_hash_set_is_a_protocol_error()
    {
        var node = new ValueNode { Name = "a" };
        node.Next = node;
        byte[] bytes = Wire.Encode((ref MarshalWriter w) => HashSetMarshaller<ValueNode?, ForgedValueNodeMarshaller>.Write(ref w, new HashSet<ValueNode?>(ReferenceEqualityComparer.Instance) { node }));

        var ex = Wire.AssertRejected(bytes, (ref MarshalReader r) => HashSetMarshaller<ValueNode?, ValueNodeMarshaller>.Read(ref r));
        Assert.Contains("cycle", ex.Message);
    }

    [Fact]
    public void A_longer_cycle_of_records_inside_other_objects_is_a_protocol_error()
    {
        var a = new ValueNode { Name = "a" };
        var b = new ValueNode { Name = "b", Next = a };
        a.Next = new ValueNode { Name = "c", Next = b };
        var holder = new Vertex { Name = "holder" };
        byte[] bytes = Wire.Encode((ref MarshalWriter w) =>
        {
            VertexMarshaller.Write(ref w, holder);
            ListMarshaller<ValueNode?, ForgedValueNodeMarshaller>.Write(ref w, [b]);
        });

        Wire.AssertRejected(bytes, (ref MarshalReader r) =>
        {
            VertexMarshaller.Read(ref r);
            return ListMarshaller<ValueNode?, ValueNodeMarshaller>.Read(ref r);
        });
    }

    [Fact]
    public void The_writer_refuses_a_record_that_refers_to_itself()
    {
        var node = new ValueNode { Name = "a" };
        node.Next = node;

        var ex = Assert.Throws<XCallException>(() => Wire.Encode((ref MarshalWriter w) => ValueNodeMarshaller.Write(ref w, node)));
        Assert.IsNotType<XCallProtocolException>(ex);
        Assert.Contains("cycle", ex.Message);
        Assert.Contains(nameof(ValueNode), ex.Message);
    }

    [Fact]
    public void The_writer_refuses_a_longer_cycle_of_records_inside_other_objects()
    {
        var a = new ValueNode { Name = "a" };
        var b = new ValueNode { Name = "b", Next = a };
        a.Next = new ValueNode { Name = "c", Next = b };

        Assert.Throws<XCallException>(() => Wire.Encode((ref MarshalWriter w) =>
        {
            VertexMarshaller.Write(ref w, new Vertex { Name = "holder" });
            ListMarshaller<ValueNode?, ValueNodeMarshaller>.Write(ref w, [new ValueNode { Name = "first" }, b]);
        }));
        // The same cycle with the forged marshaller goes out, and the reader refuses it: the writer refuses
        // exactly what the reader would.
        byte[] forged = Wire.Encode((ref MarshalWriter w) => ListMarshaller<ValueNode?, ForgedValueNodeMarshaller>.Write(ref w, [new ValueNode { Name = "first" }, b]));
        Wire.AssertRejected(forged, (ref MarshalReader r) => ListMarshaller<ValueNode?, ValueNodeMarshaller>.Read(ref r));
    }

    [Fact]
    public void The_writer_sends_records_shared_without_a_cycle_and_a_cycle_through_a_plain_object()
    {
        var shared = new ValueNode { Name = "shared" };
        var value = new ValueNode { Name = "v", Next = shared };
        value.Box = new PlainBox { Value = value };
        var list = new List<ValueNode?> { shared, value, new ValueNode { Name = "y", Next = shared } };

        byte[] bytes = Wire.Encode((ref MarshalWriter w) => ListMarshaller<ValueNode?, ValueNodeMarshaller>.Write(ref w, list));
        List<ValueNode?> read = Wire.Decode(bytes, (ref MarshalReader r) => ListMarshaller<ValueNode?, ValueNodeMarshaller>.Read(ref r))!;

        Assert.Same(read[0], read[1]!.Next);
        Assert.Same(read[0], read[2]!.Next);
        Assert.Same(read[1], read[1]!.Box!.Value);
    }

    [Fact]
    public void Records_shared_without_a_cycle_read_and_hash()
    {
        var shared = new ValueNode { Name = "shared" };
        ValueNode?[] keys = [new ValueNode { Name = "x", Next = shared }, new ValueNode { Name = "y", Next = shared }, shared];
        byte[] bytes = Wire.Encode((ref MarshalWriter w) => HashSetMarshaller<ValueNode?, ValueNodeMarshaller>.Write(ref w, [.. keys]));

        HashSet<ValueNode?> set = Wire.Decode(bytes, (ref MarshalReader r) => HashSetMarshaller<ValueNode?, ValueNodeMarshaller>.Read(ref r))!;

        Assert.Equal(3, set.Count);
        Assert.Contains(new ValueNode { Name = "shared" }, set);
        ValueNode x = set.Single(n => n!.Name == "x")!;
        Assert.Same(x.Next, set.Single(n => n!.Name == "y")!.Next);
    }

    [Fact]
    public void Many_top_level_records_sharing_one_are_checked_in_linear_time()
    {
        // Each element is a top-level object checked when its graph ends; a check that searched every object
        // read so far each time would be quadratic in time and memory over 20,000 elements.
        var shared = new ValueNode { Name = "s" };
        var nodes = new List<ValueNode?> { shared };
        for (int i = 1; i < 20_000; i++)
        {
            nodes.Add(new ValueNode { Name = "n", Next = shared });
        }
        byte[] bytes = Wire.Encode((ref MarshalWriter w) => ListMarshaller<ValueNode?, ValueNodeMarshaller>.Write(ref w, nodes));

        long before = GC.GetAllocatedBytesForCurrentThread();
        List<ValueNode?> read = Wire.Decode(bytes, (ref MarshalReader r) => ListMarshaller<ValueNode?, ValueNodeMarshaller>.Read(ref r))!;
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        Assert.Equal(20_000, read.Count);
        Assert.Same(read[0], read[^1]!.Next);
        Assert.True(allocated < 100L * bytes.Length, $"{allocated:N0} bytes allocated to read {bytes.Length:N0}");
    }

    [Fact]
    public void A_cycle_through_an_object_with_reference_equality_reads()
    {
        // record -> plain class -> the same record: the record's hash code stops at the plain object's.
        var value = new ValueNode { Name = "v" };
        value.Box = new PlainBox { Value = value };
        byte[] bytes = Wire.Encode((ref MarshalWriter w) => HashSetMarshaller<ValueNode?, ValueNodeMarshaller>.Write(ref w, [value]));

        ValueNode read = Wire.Decode(bytes, (ref MarshalReader r) => HashSetMarshaller<ValueNode?, ValueNodeMarshaller>.Read(ref r))!.Single()!;
        Assert.Same(read, read.Box!.Value);

        var loop = new ListNode { Value = 1 };
        loop.Next = loop; // a cycle of reference-equality objects alone: as before
        byte[] loopBytes = Wire.Encode((ref MarshalWriter w) => ListNodeMarshaller.Write(ref w, loop));
        ListNode readLoop = Wire.Decode(loopBytes, (ref MarshalReader r) => ListNodeMarshaller.Read(ref r))!;
        Assert.Same(readLoop, readLoop.Next);
    }
}

/// <summary>A record (equality and hash code by members) that can refer to its own type.</summary>
public sealed record class ValueNode
{
    public string Name { get; set; } = "";

    public ValueNode? Next { get; set; }

    public PlainBox? Box { get; set; }
}

/// <summary>Writes <see cref="ValueNode"/> as <see cref="ValueNodeMarshaller"/> does, but tells the writer the type
/// compares by reference: a peer that does not check, whose payloads the reader must refuse on its own.</summary>
public abstract class ForgedValueNodeMarshaller : IMarshaller<ValueNode?>
{
    private static readonly GraphType Graph = new ValueNodeMarshaller.Info(comparesByValue: false);

    public static void Write(ref MarshalWriter writer, ValueNode? value) => writer.WriteReference(value, Graph);

    public static ValueNode? Read(ref MarshalReader reader) => ValueNodeMarshaller.Read(ref reader);
}

/// <summary>A class with reference equality holding a record.</summary>
public sealed class PlainBox
{
    public ValueNode? Value;
}

public abstract class PlainBoxMarshaller : IMarshaller<PlainBox?>
{
    public static readonly GraphType Graph = new Info();

    public static void Write(ref MarshalWriter writer, PlainBox? value) => writer.WriteReference(value, Graph);

    public static PlainBox? Read(ref MarshalReader reader) => reader.ReadReference<PlainBox>(Graph);

    private sealed class Info() : GraphType(typeof(PlainBox), GraphTypeKind.Mutable)
    {
        public override void WriteBody(ref MarshalWriter writer, object value) => ValueNodeMarshaller.Write(ref writer, ((PlainBox)value).Value);

        public override object CreateEmpty() => new PlainBox();

        public override void ReadBody(ref MarshalReader reader, object value) => ((PlainBox)value).Value = ValueNodeMarshaller.Read(ref reader);
    }
}

public abstract class ValueNodeMarshaller : IMarshaller<ValueNode?>
{
    public static readonly GraphType Graph = new Info(comparesByValue: true);

    public static void Write(ref MarshalWriter writer, ValueNode? value) => writer.WriteReference(value, Graph);

    public static ValueNode? Read(ref MarshalReader reader) => reader.ReadReference<ValueNode>(Graph);

    internal sealed class Info(bool comparesByValue) : GraphType(typeof(ValueNode), GraphTypeKind.Mutable, comparesByValue)
    {
        public override void WriteBody(ref MarshalWriter writer, object value)
        {
            var node = (ValueNode)value;
            writer.WriteString(node.Name);
            writer.WriteReference(node.Next, this);
            PlainBoxMarshaller.Write(ref writer, node.Box);
        }

        public override object CreateEmpty() => new ValueNode();

        public override void ReadBody(ref MarshalReader reader, object value)
        {
            var node = (ValueNode)value;
            node.Name = reader.ReadString()!;
            node.Next = ValueNodeMarshaller.Read(ref reader);
            node.Box = PlainBoxMarshaller.Read(ref reader);
        }
    }
}
