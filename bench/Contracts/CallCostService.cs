using System.Runtime.CompilerServices;

namespace XCall.Bench;

/// <summary>
/// The benchmark's target. Each method does a little real work on its argument so no call can be
/// optimised away, and the same work on every transport.
/// </summary>
public class CallCostService : ICallCost
{
    private int _sink;

    /// <summary>Sum of what the methods saw, to check calls arrived.</summary>
    public int Sink => _sink;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void Test(int value) => _sink += value;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public virtual void TestVirt(int value) => _sink ^= value;

    /// <summary>The work of <see cref="TestVirt"/>, for overrides: inlined, so an override is one call, as <see cref="Test"/> is.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    protected void Mix(int value) => _sink ^= value;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void TestData(Data data) => _sink += data.p;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void TestRecord(Stamp stamp) => _sink += stamp.p;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void TestString(string text) => _sink += text.Length;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void TestBytes(byte[] data) => _sink += data[^1];

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void TestInts(int[] data) => _sink += data[^1];

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void TestStruct(Vector value) => _sink += value.Id;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void TestRefOut(ref int value, out int doubled)
    {
        doubled = value * 2;
        value++;
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    public Task<int> TestTask(int value) => Task.FromResult(value + 1);

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void TestOneWay(int value) => Interlocked.Add(ref _sink, value);

    public Task Park(CancellationToken cancellationToken) => Task.Delay(Timeout.Infinite, cancellationToken);

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void TestGraph(TreeNode root) => _sink += root.Children.Count;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public int TestCallback(ICallSink sink) => sink.Take(_sink & 0xff);

    /// <summary>A tree of <paramref name="count"/> nodes (root, 9 children, 9 grandchildren each, and so on).</summary>
    public static TreeNode Tree(int count)
    {
        var root = new TreeNode { Id = 0, Name = "n0" };
        var queue = new Queue<TreeNode>([root]);
        for (int id = 1; id < count;)
        {
            TreeNode parent = queue.Dequeue();
            for (int i = 0; i < 9 && id < count; i++, id++)
            {
                var child = new TreeNode { Id = id, Name = "n" + id };
                parent.Children.Add(child);
                queue.Enqueue(child);
            }
        }
        return root;
    }
}

/// <summary>
/// Overrides the virtual method, so <c>virt</c> really dispatches virtually. The override does the work
/// itself rather than call its base: a second call would be the target's cost, not the call's.
/// </summary>
public sealed class DerivedCallCostService : CallCostService
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public override void TestVirt(int value) => Mix(value + 1);
}
