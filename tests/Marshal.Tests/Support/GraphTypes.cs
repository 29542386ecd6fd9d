namespace XCall.Marshal.Tests;

#pragma warning disable CS8631 // TagMarshaller (IMarshaller<Tag?>) as a dictionary key marshaller, as generated code does.
using TagCountsMarshaller = DictionaryMarshaller<Tag, TagMarshaller, int, UnmanagedMarshaller<int>>;
#pragma warning restore CS8631

// Graph types with marshallers written the way the generator writes them (see the generator baselines):
// a static GraphType per class, Write / Read through WriteReference / ReadReference.

/// <summary>Mutable: created empty, filled breadth-first.</summary>
public sealed class ListNode
{
    public int Value;
    public ListNode? Next;

    public static ListNode? Chain(int length)
    {
        ListNode? head = null;
        for (int i = length - 1; i >= 0; i--)
        {
            head = new ListNode { Value = i, Next = head };
        }
        return head;
    }
}

public abstract class ListNodeMarshaller : IMarshaller<ListNode?>
{
    public static readonly GraphType Graph = new Info();

    public static void Write(ref MarshalWriter writer, ListNode? value) => writer.WriteReference(value, Graph);

    public static ListNode? Read(ref MarshalReader reader) => reader.ReadReference<ListNode>(Graph);

    private sealed class Info() : GraphType(typeof(ListNode), GraphTypeKind.Mutable)
    {
        public override void WriteBody(ref MarshalWriter writer, object value)
        {
            var node = (ListNode)value;
            writer.WriteInt32(node.Value);
            ListNodeMarshaller.Write(ref writer, node.Next);
        }

        public override object CreateEmpty() => new ListNode();

        public override void ReadBody(ref MarshalReader reader, object value)
        {
            var node = (ListNode)value;
            node.Value = reader.ReadInt32();
            node.Next = ListNodeMarshaller.Read(ref reader);
        }
    }
}

/// <summary>Mutable, with a list of references to its own type: any graph.</summary>
public sealed class Vertex
{
    public string? Name;
    public List<Vertex?> Edges = [];
}

public abstract class VertexMarshaller : IMarshaller<Vertex?>
{
    public static readonly GraphType Graph = new Info();

    public static void Write(ref MarshalWriter writer, Vertex? value) => writer.WriteReference(value, Graph);

    public static Vertex? Read(ref MarshalReader reader) => reader.ReadReference<Vertex>(Graph);

    private sealed class Info() : GraphType(typeof(Vertex), GraphTypeKind.Mutable)
    {
        public override void WriteBody(ref MarshalWriter writer, object value)
        {
            var vertex = (Vertex)value;
            writer.WriteString(vertex.Name);
            ListMarshaller<Vertex?, VertexMarshaller>.Write(ref writer, vertex.Edges);
        }

        public override object CreateEmpty() => new Vertex();

        public override void ReadBody(ref MarshalReader reader, object value)
        {
            var vertex = (Vertex)value;
            vertex.Name = reader.ReadString();
            vertex.Edges = ListMarshaller<Vertex?, VertexMarshaller>.Read(ref reader)!;
        }
    }
}

/// <summary>Mutable, two references of one type: diamonds.</summary>
public sealed class Pair
{
    public ListNode? Left;
    public ListNode? Right;
}

public abstract class PairMarshaller : IMarshaller<Pair?>
{
    public static readonly GraphType Graph = new Info();

    public static void Write(ref MarshalWriter writer, Pair? value) => writer.WriteReference(value, Graph);

    public static Pair? Read(ref MarshalReader reader) => reader.ReadReference<Pair>(Graph);

    private sealed class Info() : GraphType(typeof(Pair), GraphTypeKind.Mutable)
    {
        public override void WriteBody(ref MarshalWriter writer, object value)
        {
            var pair = (Pair)value;
            ListNodeMarshaller.Write(ref writer, pair.Left);
            ListNodeMarshaller.Write(ref writer, pair.Right);
        }

        public override object CreateEmpty() => new Pair();

        public override void ReadBody(ref MarshalReader reader, object value)
        {
            var pair = (Pair)value;
            pair.Left = ListNodeMarshaller.Read(ref reader);
            pair.Right = ListNodeMarshaller.Read(ref reader);
        }
    }
}

/// <summary>
/// Immutable (built by its constructor) but with a settable reference, so a program can tie it into a
/// cycle the reader could never build.
/// </summary>
public sealed class Knot(string name)
{
    public string Name { get; } = name;
    public Knot? Next { get; set; }
    public ListNode? Node { get; set; }
}

public abstract class KnotMarshaller : IMarshaller<Knot?>
{
    public static readonly GraphType Graph = new Info();

    public static void Write(ref MarshalWriter writer, Knot? value) => writer.WriteReference(value, Graph);

    public static Knot? Read(ref MarshalReader reader) => reader.ReadReference<Knot>(Graph);

    private sealed class Info() : GraphType(typeof(Knot), GraphTypeKind.Immutable)
    {
        public override void WriteBody(ref MarshalWriter writer, object value)
        {
            var knot = (Knot)value;
            writer.WriteString(knot.Name);
            KnotMarshaller.Write(ref writer, knot.Next);
            ListNodeMarshaller.Write(ref writer, knot.Node);
        }

        public override object ReadObject(ref MarshalReader reader)
        {
            string? name = reader.ReadString();
            Knot? next = KnotMarshaller.Read(ref reader);
            ListNode? node = ListNodeMarshaller.Read(ref reader);
            return new Knot(name!) { Next = next, Node = node };
        }
    }
}

/// <summary>A polymorphic base with two known types.</summary>
public abstract class Animal
{
    public string? Name;
}

public sealed class Dog : Animal
{
    public int Barks;
}

public sealed class Cat : Animal
{
    public Animal? Friend;
}

/// <summary>An animal that is not a known type of <see cref="Animal"/>.</summary>
public sealed class Fox : Animal
{
}

public abstract class AnimalMarshaller : IMarshaller<Animal?>
{
    public const ushort DogId = 1;
    public const ushort CatId = 7;

    public static readonly GraphType Graph = new Info();

    public static void Write(ref MarshalWriter writer, Animal? value) => writer.WriteReference(value, Graph);

    public static Animal? Read(ref MarshalReader reader) => reader.ReadReference<Animal>(Graph);

    private sealed class Info() : GraphType(typeof(Animal), GraphTypeKind.Abstract)
    {
        public override GraphType? GetKnownType(Type runtimeType, out ushort typeId)
        {
            if (runtimeType == typeof(Dog))
            {
                typeId = DogId;
                return DogMarshaller.Graph;
            }
            if (runtimeType == typeof(Cat))
            {
                typeId = CatId;
                return CatMarshaller.Graph;
            }
            typeId = 0;
            return null;
        }

        public override GraphType? GetKnownType(ushort typeId) => typeId switch
        {
            DogId => DogMarshaller.Graph,
            CatId => CatMarshaller.Graph,
            _ => null,
        };
    }
}

public abstract class DogMarshaller : IMarshaller<Dog?>
{
    public static readonly GraphType Graph = new Info();

    public static void Write(ref MarshalWriter writer, Dog? value) => writer.WriteReference(value, Graph);

    public static Dog? Read(ref MarshalReader reader) => reader.ReadReference<Dog>(Graph);

    private sealed class Info() : GraphType(typeof(Dog), GraphTypeKind.Mutable)
    {
        public override void WriteBody(ref MarshalWriter writer, object value)
        {
            var dog = (Dog)value;
            writer.WriteString(dog.Name);
            writer.WriteInt32(dog.Barks);
        }

        public override object CreateEmpty() => new Dog();

        public override void ReadBody(ref MarshalReader reader, object value)
        {
            var dog = (Dog)value;
            dog.Name = reader.ReadString();
            dog.Barks = reader.ReadInt32();
        }
    }
}

public abstract class CatMarshaller : IMarshaller<Cat?>
{
    public static readonly GraphType Graph = new Info();

    public static void Write(ref MarshalWriter writer, Cat? value) => writer.WriteReference(value, Graph);

    public static Cat? Read(ref MarshalReader reader) => reader.ReadReference<Cat>(Graph);

    private sealed class Info() : GraphType(typeof(Cat), GraphTypeKind.Mutable)
    {
        public override void WriteBody(ref MarshalWriter writer, object value)
        {
            var cat = (Cat)value;
            writer.WriteString(cat.Name);
            AnimalMarshaller.Write(ref writer, cat.Friend);
        }

        public override object CreateEmpty() => new Cat();

        public override void ReadBody(ref MarshalReader reader, object value)
        {
            var cat = (Cat)value;
            cat.Name = reader.ReadString();
            cat.Friend = AnimalMarshaller.Read(ref reader);
        }
    }
}

/// <summary>Mutable with value equality: a hash set of these must be filled after their members are read.</summary>
public sealed record class Tag
{
    public string Name { get; set; } = "";
}

public abstract class TagMarshaller : IMarshaller<Tag?>
{
    public static readonly GraphType Graph = new Info();

    public static void Write(ref MarshalWriter writer, Tag? value) => writer.WriteReference(value, Graph);

    public static Tag? Read(ref MarshalReader reader) => reader.ReadReference<Tag>(Graph);

    private sealed class Info() : GraphType(typeof(Tag), GraphTypeKind.Mutable)
    {
        public override void WriteBody(ref MarshalWriter writer, object value) => writer.WriteString(((Tag)value).Name);

        public override object CreateEmpty() => new Tag();

        public override void ReadBody(ref MarshalReader reader, object value) => ((Tag)value).Name = reader.ReadString()!;
    }
}

/// <summary>Mutable, holding a set and a dictionary keyed by <see cref="Tag"/> objects.</summary>
public sealed class TagBag
{
    public Tag? Favorite;
    public HashSet<Tag?> Tags = [];
    public Dictionary<Tag, int> Counts = [];
}

public abstract class TagBagMarshaller : IMarshaller<TagBag?>
{
    public static readonly GraphType Graph = new Info();

    public static void Write(ref MarshalWriter writer, TagBag? value) => writer.WriteReference(value, Graph);

    public static TagBag? Read(ref MarshalReader reader) => reader.ReadReference<TagBag>(Graph);

    private sealed class Info() : GraphType(typeof(TagBag), GraphTypeKind.Mutable)
    {
        public override void WriteBody(ref MarshalWriter writer, object value)
        {
            var bag = (TagBag)value;
            TagMarshaller.Write(ref writer, bag.Favorite);
            HashSetMarshaller<Tag?, TagMarshaller>.Write(ref writer, bag.Tags);
            TagCountsMarshaller.Write(ref writer, bag.Counts);
        }

        public override object CreateEmpty() => new TagBag();

        public override void ReadBody(ref MarshalReader reader, object value)
        {
            var bag = (TagBag)value;
            bag.Favorite = TagMarshaller.Read(ref reader);
            bag.Tags = HashSetMarshaller<Tag?, TagMarshaller>.Read(ref reader)!;
            bag.Counts = TagCountsMarshaller.Read(ref reader)!;
        }
    }
}

/// <summary>Immutable, with a constructor that validates what the payload holds.</summary>
public sealed class Positive
{
    public Positive(int value) => Value = value >= 0 ? value : throw new ArgumentOutOfRangeException(nameof(value), value, "Must not be negative.");

    public int Value { get; }
}

public abstract class PositiveMarshaller : IMarshaller<Positive?>
{
    public static readonly GraphType Graph = new Info();

    public static void Write(ref MarshalWriter writer, Positive? value) => writer.WriteReference(value, Graph);

    public static Positive? Read(ref MarshalReader reader) => reader.ReadReference<Positive>(Graph);

    private sealed class Info() : GraphType(typeof(Positive), GraphTypeKind.Immutable)
    {
        public override void WriteBody(ref MarshalWriter writer, object value) => writer.WriteInt32(((Positive)value).Value);

        public override object ReadObject(ref MarshalReader reader) => new Positive(reader.ReadInt32());
    }
}
