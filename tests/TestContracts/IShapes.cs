using System.Collections.Immutable;

namespace XCall.Tests.Contracts;

/// <summary>Every method shape the generator supports.</summary>
[Remotable]
public interface IShapes
{
    void Ping();

    /// <summary>How many <see cref="Ping"/> calls reached this instance: what a test reads to see a void call arrive.</summary>
    int PingCount();
    int Add(int a, int b);
    long Add(long a, long b);
    string? Echo(string? s);
    byte[]? Reverse(byte[]? data);
    int Sum(ReadOnlySpan<int> values);

    /// <summary>A hash of the block, copied out with <see cref="LentSpan{T}.CopyTo"/> (lent across shared memory).</summary>
    long Checksum(LentSpan<byte> data);

    /// <summary>Waits for <see cref="ReleaseChecksum"/>, then hashes the block: a read of a lent block long after the call.</summary>
    long ChecksumWhenReleased(LentSpan<byte> data);

    /// <summary>Lets one <see cref="ChecksumWhenReleased"/> go on.</summary>
    void ReleaseChecksum();

    /// <summary>What the last <see cref="ChecksumWhenReleased"/> came to (its hash, or its exception), once it ended.</summary>
    string AwaitChecksumOutcome();
    Order RoundTrip(Order order);

    /// <summary>Returns its argument: a record nothing can change, which a domain call hands over as it is.</summary>
    Point Keep(Point point);
    Data Increment(Data data);
    Immutable Make(int a, string b);
    Money Convert(Money m);
    Vec3 Scale(Vec3 v, float f);
    DateTime Tomorrow(DateTime d);
    void Swap(ref int a, ref int b);
    bool TryParse(string s, out int value);
    void Mutate(byte[] data);
    Task DelayAsync(int milliseconds, CancellationToken cancellationToken);
    Task<int> AddAsync(int a, int b);
    ValueTask PingAsync();
    ValueTask<string> ConcatAsync(string a, string b);
    Task<Order> RoundTripAsync(Order order);
    [OneWay] void Post(string message);
    int Fail(string message);
    Task FailAsync(string message);
    int WaitForCancel(CancellationToken cancellationToken);
    bool CanCancel(CancellationToken cancellationToken);
    Task<bool> CanCancelAsync(CancellationToken cancellationToken);
    List<string?> Names(List<string?> names);
    Dictionary<string, List<int>>? Group(Dictionary<string, List<int>>? input);
    int? MaybeDouble(int? x);
    ReadOnlyMemory<double> Doubles(ReadOnlyMemory<double> values);
    Color Next(Color c);
    decimal AddDecimal(decimal a, decimal b);
    Guid Same(Guid g);
    List<int>? Squares(List<int>? values);

    // Object graphs: identity, cycles, depth, polymorphism, records, more collections, registered marshallers.
    Node? ReverseList(Node? head);
    int Length(Node? head);
    Graph Touch(Graph graph);
    bool AreSame(Data a, Data b);
    Shape[] Scale(Shape[] shapes, double factor);
    List<Shape> ByArea(List<Shape> shapes);
    Person Move(Person person, string city);
    Settings Promote(Settings settings);
    HashSet<string> Union(HashSet<string> a, ImmutableArray<string> b);
    ImmutableArray<int> Evens(ImmutableArray<int> values);
    Dictionary<string, List<Shape>> GroupByKind(List<Shape> shapes);
    Uri Resolve(Uri baseUri, string relative);
}

/// <summary>A second contract, for hosts that serve several.</summary>
[Remotable]
public interface IGreeter
{
    string Greet(string name);
}
