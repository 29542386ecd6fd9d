namespace XCall.Generator.Tests.Support;

/// <summary>Representative [Remotable] contracts, shared by the baseline and compilation tests.</summary>
internal static class ContractSources
{
    /// <summary>One method of every shape the generator supports.</summary>
    public const string Shapes = """
        using System.Threading;
        using System.Threading.Tasks;
        using XCall;

        namespace Sample;

        public class Data
        {
            public int p;
        }

        public record Point(int X, int Y);

        [Remotable]
        public interface IShapes
        {
            int Add(int a, int b);
            long Add(long a, long b);
            void Ping();
            string? Echo(string? text);
            byte[] Reverse(byte[] data);
            Data Increment(Data data);
            Point Move(Point point, int dx);
            void Swap(ref int a, ref int b);
            bool TryParse(string text, out int value);
            Task DelayAsync(int milliseconds, CancellationToken cancellationToken);
            Task<int> AddAsync(int a, int b);
            ValueTask PingAsync();
            ValueTask<Point> MoveAsync(Point point, CancellationToken cancellationToken);
            [OneWay] void Post(string message);
            [OneWay] void Nudge(int dx, double scale);
            [OneWay] void Tick();
            int WaitForCancel(CancellationToken cancellationToken);
            [LongWait] Task<int> NextEventAsync(int after, CancellationToken cancellationToken);
            [LongWait] ValueTask DrainedAsync();
        }
        """;

    /// <summary>Data types of every kind: constructor-created, init-only, record struct, recursive, nested collections, spans.</summary>
    public const string DataTypes = """
        using System;
        using System.Collections.Generic;
        using System.Threading.Tasks;
        using XCall;

        namespace Sample.Orders;

        public enum Color { Red, Green }

        public record struct Money(decimal Amount, string Currency);

        public struct Vec3
        {
            public float X;
            public float Y;
            public float Z;
        }

        public sealed class Line
        {
            public string Sku = "";
            public int Qty;
        }

        public sealed class Order
        {
            public int Id { get; set; }
            public string? Customer { get; set; }
            public List<Line> Lines { get; set; } = [];
            public Dictionary<string, List<int>>? Tags { get; set; }
            public Money Price { get; set; }
            public Money? Discount { get; set; }
            public Color Color { get; set; }
            public int? Optional { get; set; }
            public Order? Parent { get; set; }
            public Vec3[]? Path { get; set; }
            public string[]? Notes { get; init; }
        }

        public sealed class Immutable
        {
            public Immutable(int a, string b)
            {
                A = a;
                B = b;
            }

            public int A { get; }
            public string B { get; }
            public int Computed => A * 2;
        }

        [Remotable]
        public interface IOrders
        {
            Order RoundTrip(Order order);
            Task<Order?> FindAsync(Guid key);
            Immutable Make(int a, string b);
            List<Order>? All(List<int>? ids);
            int Sum(ReadOnlySpan<int> values);
            void Fill(ReadOnlySpan<byte> buffer);
            long Store(LentSpan<long> block);
            void Split(LentSpan<long> block, out ReadOnlySpan<long> head);
            ReadOnlyMemory<double> Doubles(ReadOnlyMemory<double> values);
            Vec3 Scale(in Vec3 v, float f);
            Money? Total(Dictionary<string, Money> prices);
        }
        """;

    /// <summary>Inherited methods, keyword-named parameters, and two contracts sharing a data type.</summary>
    public const string Inheritance = """
        using System.Threading.Tasks;
        using XCall;

        namespace Sample.Inheritance;

        public class Item
        {
            public string Name { get; set; } = "";
        }

        public interface IReader
        {
            Item Get(int id);
        }

        [Remotable]
        public interface IStore : IReader
        {
            void Put(Item item, bool @checked);
            Task<string> DescribeAsync(Item @event);
        }

        [Remotable]
        public interface IAudit
        {
            [OneWay] void Record(Item item);
        }
        """;

    /// <summary>Object graphs: a mutable list node, known types on an abstract class and an interface, records,
    /// init-only members, a recursive struct, hash sets, immutable arrays, a registered marshaller, and methods
    /// whose domain copies go through one message.</summary>
    public const string Graphs = """
        using System;
        using System.Collections.Generic;
        using System.Collections.Immutable;
        using XCall;
        using XCall.Marshal;

        [assembly: XCallMarshaller(typeof(Uri), typeof(Sample.Graphs.UriMarshaller))]

        namespace Sample.Graphs;

        public abstract class UriMarshaller : IMarshaller<Uri?>
        {
            public static void Write(ref MarshalWriter writer, Uri? value) => writer.WriteString(value?.OriginalString);

            public static Uri? Read(ref MarshalReader reader) => reader.ReadString() is { } text ? new Uri(text, UriKind.Absolute) : null;
        }

        public sealed class Node
        {
            public int Value;
            public Node? Next;
        }

        [XCallKnownType(typeof(Circle), 1)]
        [XCallKnownType(typeof(Square), 2)]
        public abstract class Shape
        {
            public double X;
        }

        public sealed class Circle : Shape, IRound
        {
            public double Radius;
        }

        public class Square : Shape
        {
            public double Side;
        }

        [XCallKnownType(typeof(Circle), 10)]
        public interface IRound
        {
        }

        public sealed record Person(string Name, ImmutableArray<string> Tags, Node? Favorite);

        public sealed record Chain(string Name, Chain? Next);

        public sealed class Settings
        {
            public required string Name { get; init; }
            public HashSet<Node> Watched { get; init; } = [];
        }

        public struct Holder
        {
            public Node? Node;
            public List<Holder>? Children;
        }

        // Lists that start empty and unshared (empty initializer, no constructor of its own) are filled on
        // read; the others are replaced by a new list.
        public sealed class Folder
        {
            public string Name = "";
            public List<Folder> Children = [];
            public List<Node> Pinned { get; set; } = new();
            public List<Node>? Recent = new List<Node>();
            public List<int> Sizes = [];
        }

        public sealed class Album
        {
            public static readonly List<Node> Shared = [];

            public Album() => Photos = Shared;

            public List<Node> Photos = [];
        }

        // Frozen (nothing changes once built): a domain call shares them. The others may change: copied.
        public record Stamp(int Id, string Label);

        public sealed class Fixed
        {
            private readonly long _ticks;

            public Fixed(int id)
            {
                Id = id;
                _ticks = id * 10L;
            }

            public int Id { get; }

            public DateTime When => new(_ticks);
        }

        public sealed record Tagged(int Id)
        {
            private int _hits;

            public int Hit() => ++_hits;
        }

        public sealed class Tally
        {
            public Tally(int id) => Id = id;

            public int Id { get; }

            public int Hits { get; private set; }

            public void Hit() => Hits++;
        }

        // Also copied: an event, a partial class (another generator may add state).
        public sealed class Notifier
        {
            public Notifier(int id) => Id = id;

            public int Id { get; }

            public event Action? Changed;

            public void Raise() => Changed?.Invoke();
        }

        public sealed partial class Piece
        {
            public Piece(int id) => Id = id;

            public int Id { get; }
        }

        public sealed class Counter
        {
            public int Value { get; private set; }

            public void Bump() => Value++;
        }

        [Remotable]
        public interface IGraphs
        {
            Stamp Keep(Stamp stamp, Fixed fixedOne, Tagged tagged, Counter counter, Tally tally, Notifier notifier, Piece piece);
            Node? Reverse(Node? head);
            bool Same(Node a, Node b);
            Shape[] Scale(Shape[] shapes, double factor);
            IRound? Roundest(List<IRound> items);
            Person Rename(Person person, string name);
            Chain Extend(Chain chain);
            Settings Watch(Settings settings, out Node first, ref Node? second);
            Dictionary<string, HashSet<Node>> Index(ImmutableArray<Node> nodes, ImmutableArray<int> keys);
            Uri Resolve(Uri root, string relative);
            Holder Wrap(Holder holder);
            Folder Browse(Folder folder, Album album);
        }
        """;

    /// <summary>[Remotable] interfaces as parameters, results (also Task&lt;T&gt;), members and elements: object references.</summary>
    public const string References = """
        using System.Collections.Generic;
        using System.Threading.Tasks;
        using XCall;

        namespace Sample;

        [Remotable]
        public interface ICallback { int Report(int value); }

        public sealed class Holder { public string? Name { get; set; } public ICallback? Callback { get; set; } }

        [Remotable]
        public interface IService
        {
            int CallBack(ICallback callback, int n);
            ICallback? Echo(ICallback? callback);
            Task<ICallback> CreateAsync();
            int Many(List<ICallback> callbacks, Holder holder);
            // Parameters named like the domain proxy's own members still compile.
            int Named(Holder Link, ICallback Target);
        }
        """;

    public const string Streams = """
        using System.Collections.Generic;
        using System.Threading;
        using System.Threading.Tasks;
        using XCall;

        namespace Sample;

        public sealed class Item { public int Id { get; set; } public string? Name { get; set; } }

        [Remotable]
        public interface IFeed
        {
            IAsyncEnumerable<int> Numbers(int start, int count);
            IAsyncEnumerable<Item> Items(string filter, CancellationToken cancellationToken);
            IAsyncEnumerable<string?> Lines(in int skip);
            IAsyncEnumerable<long> All();
            Task<long> Sum(IAsyncEnumerable<int> values);
            Task<IAsyncEnumerable<double>> Later();
        }
        """;

    /// <summary>The source of a baseline case by name.</summary>
    public static string ByCase(string name) => name switch
    {
        nameof(Shapes) => Shapes,
        nameof(DataTypes) => DataTypes,
        nameof(Inheritance) => Inheritance,
        nameof(Graphs) => Graphs,
        nameof(References) => References,
        nameof(Streams) => Streams,
        _ => throw new ArgumentOutOfRangeException(nameof(name), name, "Unknown contract case."),
    };
}
