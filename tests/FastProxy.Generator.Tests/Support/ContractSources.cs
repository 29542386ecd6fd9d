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
            int WaitForCancel(CancellationToken cancellationToken);
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
            void Fill(Span<byte> buffer);
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

    /// <summary>The source of a baseline case by name.</summary>
    public static string ByCase(string name) => name switch
    {
        nameof(Shapes) => Shapes,
        nameof(DataTypes) => DataTypes,
        nameof(Inheritance) => Inheritance,
        _ => throw new ArgumentOutOfRangeException(nameof(name), name, "Unknown contract case."),
    };
}
