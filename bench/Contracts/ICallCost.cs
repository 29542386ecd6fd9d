using MemoryPack;

namespace XCall.Bench;

/// <summary>The 2004 measurement's data case: one int field, nothing else.</summary>
public class Data
{
    public int p;
}

/// <summary>The data case as a record: nothing can change it once built, so a domain call hands the callee the
/// caller's object instead of a copy.</summary>
public sealed record Stamp(int p);

/// <summary>An unmanaged struct: one block copy.</summary>
public struct Vector
{
    public double X;
    public double Y;
    public double Z;
    public int Id;
}

/// <summary>
/// A node of the 100-object graph row and of the 1,000-object serializer comparison. The MemoryPack attributes
/// serve only that comparison: the circular-reference mode keeps object identity, as XCall's marshaller does.
/// </summary>
[MemoryPackable(GenerateType.CircularReference)]
public sealed partial class TreeNode
{
    [MemoryPackOrder(0)]
    public int Id;

    [MemoryPackOrder(1)]
    public string Name = "";

    [MemoryPackOrder(2)]
    public List<TreeNode> Children = [];
}

/// <summary>The inherited part of the contract: <c>virt</c> calls reach a virtual method through a base interface.</summary>
[Remotable]
public interface ICallBase
{
    void TestVirt(int value);
}

/// <summary>The six classic signatures of the call-cost benchmark (see docs/benchmarks.md, "Reading the table").</summary>
[Remotable]
public interface ICallCost : ICallBase
{
    void Test(int value);

    void TestData(Data data);

    /// <summary><see cref="TestData"/> with a record.</summary>
    void TestRecord(Stamp stamp);

    void TestString(string text);

    void TestBytes(byte[] data);

    /// <summary><c>int[1,000,000]</c>.</summary>
    void TestInts(int[] data);

    /// <summary>An unmanaged struct of 28 bytes.</summary>
    void TestStruct(Vector value);

    /// <summary><c>ref</c> and <c>out</c> parameters copied back.</summary>
    void TestRefOut(ref int value, out int doubled);

    /// <summary><c>Task&lt;int&gt;</c>, awaited.</summary>
    Task<int> TestTask(int value);

    /// <summary><c>[OneWay] void</c>: returns once sent.</summary>
    [OneWay]
    void TestOneWay(int value);

    /// <summary>A tree of 100 objects.</summary>
    void TestGraph(TreeNode root);

    /// <summary>Waits until cancelled: the long call kept pending in <c>--async-probe</c>.</summary>
    Task Park(CancellationToken cancellationToken);

    /// <summary>A callback: the callee calls <paramref name="sink"/> back once, over the same connection.</summary>
    int TestCallback(ICallSink sink);
}

/// <summary>The caller's object in the callback row, passed by reference.</summary>
[Remotable]
public interface ICallSink
{
    int Take(int value);
}

/// <summary>The caller's side of the callback row.</summary>
public sealed class CallSink : ICallSink
{
    public int Take(int value) => value + 1;
}
