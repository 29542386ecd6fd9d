using System.Collections.Immutable;
using System.Globalization;
using System.Threading.Channels;

namespace XCall.Tests.Contracts;

/// <summary>The reference implementation of <see cref="IShapes"/> used by every transport's tests.</summary>
public class Shapes : IShapes
{
    /// <summary>Messages received by <see cref="Post"/>, in every load context (a static of the shared assembly).</summary>
    public static Channel<string> Posted { get; } = Channel.CreateUnbounded<string>();

    /// <summary>Signalled when <see cref="WaitForCancel"/> or <see cref="DelayAsync"/> starts waiting.</summary>
    public static Channel<string> Started { get; } = Channel.CreateUnbounded<string>();

    private int _pings;

    public void Ping() => Interlocked.Increment(ref _pings);
    public int PingCount() => Volatile.Read(ref _pings);
    public int Add(int a, int b) => a + b;
    public long Add(long a, long b) => a + b + 1_000_000_000_000L;
    public string? Echo(string? s) => s;
    public byte[]? Reverse(byte[]? data)
    {
        if (data is null)
        {
            return null;
        }
        byte[] copy = (byte[])data.Clone();
        Array.Reverse(copy);
        return copy;
    }

    public long Checksum(LentSpan<byte> data)
    {
        byte[] copy = new byte[data.Length + 1]; // room to spare: CopyTo fills the start
        data.CopyTo(copy);
        return Hash(copy.AsSpan(0, data.Length));
    }

    private static readonly SemaphoreSlim s_checksumGate = new(0);
    private static TaskCompletionSource<string> s_checksumOutcome = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public long ChecksumWhenReleased(LentSpan<byte> data)
    {
        var outcome = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        Volatile.Write(ref s_checksumOutcome, outcome);
        s_checksumGate.Wait();
        try
        {
            long hash = Checksum(data);
            outcome.TrySetResult(hash.ToString(System.Globalization.CultureInfo.InvariantCulture));
            return hash;
        }
        catch (Exception ex)
        {
            outcome.TrySetResult($"{ex.GetType().Name}: {ex.Message}");
            throw;
        }
    }

    public void ReleaseChecksum() => s_checksumGate.Release();

    public string AwaitChecksumOutcome() => Volatile.Read(ref s_checksumOutcome).Task.WaitAsync(TimeSpan.FromSeconds(30)).GetAwaiter().GetResult();

    /// <summary>What <see cref="Checksum"/> returns for <paramref name="data"/>.</summary>
    public static long Hash(ReadOnlySpan<byte> data)
    {
        long h = data.Length;
        foreach (byte b in data)
        {
            h = (h * 31) + b;
        }
        return h;
    }

    public int Sum(ReadOnlySpan<int> values)
    {
        int sum = 0;
        foreach (int v in values)
        {
            sum += v;
        }
        return sum;
    }

    public Order RoundTrip(Order order) => order;
    public Point Keep(Point point) => point;
    public Data Increment(Data data) => new() { p = data.p + 1 };
    public Immutable Make(int a, string b) => new(a, b);
    public Money Convert(Money m) => m with { Amount = m.Amount * 2, Currency = m.Currency + "x2" };
    public Vec3 Scale(Vec3 v, float f) => new() { X = v.X * f, Y = v.Y * f, Z = v.Z * f };
    public DateTime Tomorrow(DateTime d) => d.AddDays(1);
    public void Swap(ref int a, ref int b) => (a, b) = (b, a);
    public bool TryParse(string s, out int value) => int.TryParse(s, NumberStyles.Integer, CultureInfo.InvariantCulture, out value);
    public void Mutate(byte[] data) => Array.Fill(data, (byte)0xEE);

    public async Task DelayAsync(int milliseconds, CancellationToken cancellationToken)
    {
        Started.Writer.TryWrite(nameof(DelayAsync));
        await Task.Delay(milliseconds, cancellationToken);
    }

    public async Task<int> AddAsync(int a, int b)
    {
        await Task.Yield();
        return a + b;
    }

    public ValueTask PingAsync() => default;

    public async ValueTask<string> ConcatAsync(string a, string b)
    {
        await Task.Yield();
        return a + b;
    }

    public Task<Order> RoundTripAsync(Order order) => Task.FromResult(order);
    public void Post(string message) => Posted.Writer.TryWrite(message);
    public int Fail(string message) => throw new InvalidOperationException(message);

    public async Task FailAsync(string message)
    {
        await Task.Yield();
        throw new ArgumentException(message);
    }

    public bool CanCancel(CancellationToken cancellationToken) => cancellationToken.CanBeCanceled;

    public async Task<bool> CanCancelAsync(CancellationToken cancellationToken)
    {
        await Task.Yield();
        return cancellationToken.CanBeCanceled;
    }

    public int WaitForCancel(CancellationToken cancellationToken)
    {
        Started.Writer.TryWrite(nameof(WaitForCancel));
        cancellationToken.WaitHandle.WaitOne();
        cancellationToken.ThrowIfCancellationRequested();
        return -1;
    }

    public List<string?> Names(List<string?> names) => [.. names, "added"];
    public Dictionary<string, List<int>>? Group(Dictionary<string, List<int>>? input) =>
        input?.ToDictionary(p => p.Key.ToUpperInvariant(), p => p.Value.Select(v => v * 10).ToList());
    public int? MaybeDouble(int? x) => x * 2;
    public ReadOnlyMemory<double> Doubles(ReadOnlyMemory<double> values) => values.ToArray().Select(v => v * 2).ToArray();
    public Color Next(Color c) => (Color)(((int)c + 1) % 3);
    public decimal AddDecimal(decimal a, decimal b) => a + b;
    public Guid Same(Guid g) => g;
    public List<int>? Squares(List<int>? values) => values?.Select(v => v * v).ToList();

    public Node? ReverseList(Node? head)
    {
        Node? reversed = null;
        while (head is not null)
        {
            Node? next = head.Next;
            head.Next = reversed;
            reversed = head;
            head = next;
        }
        return reversed;
    }

    public int Length(Node? head)
    {
        int length = 0;
        for (; head is not null; head = head.Next)
        {
            length++;
        }
        return length;
    }

    public Graph Touch(Graph graph)
    {
        graph.Touches++;
        foreach (GraphNode node in graph.Nodes)
        {
            node.Name += "!";
        }
        return graph;
    }

    public bool AreSame(Data a, Data b) => ReferenceEquals(a, b);

    public Shape[] Scale(Shape[] shapes, double factor)
    {
        // Each distinct shape once: a shape listed twice is one object here too.
        foreach (Shape shape in shapes.Distinct(ReferenceEqualityComparer.Instance).Cast<Shape>())
        {
            switch (shape)
            {
                case Circle c:
                    c.Radius *= factor;
                    break;
                case Square s:
                    s.Side *= factor;
                    break;
            }
        }
        return shapes;
    }

    public List<Shape> ByArea(List<Shape> shapes) => [.. shapes.OrderBy(Area)];

    public Person Move(Person person, string city) => person with { Home = person.Home with { City = city } };

    public Settings Promote(Settings settings) => new()
    {
        Name = settings.Name.ToUpperInvariant(),
        Level = settings.Level + 1,
        Owner = settings.Owner,
        Flags = [.. settings.Flags, "promoted"],
    };

    public HashSet<string> Union(HashSet<string> a, ImmutableArray<string> b) => [.. a, .. b];

    public ImmutableArray<int> Evens(ImmutableArray<int> values) => values.IsDefault ? values : [.. values.Where(v => v % 2 == 0)];

    public Dictionary<string, List<Shape>> GroupByKind(List<Shape> shapes) =>
        shapes.GroupBy(s => s.GetType().Name).ToDictionary(g => g.Key, g => g.ToList());

    public Uri Resolve(Uri baseUri, string relative) => new(baseUri, relative);

    private static double Area(Shape shape) => shape switch
    {
        Circle c => Math.PI * c.Radius * c.Radius,
        Square s => s.Side * s.Side,
        _ => 0,
    };
}

/// <summary>Implementation of <see cref="IGreeter"/>.</summary>
public class Greeter : IGreeter
{
    public string Greet(string name) => $"Hello, {name}";
}
