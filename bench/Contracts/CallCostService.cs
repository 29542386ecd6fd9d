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

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void TestData(Data data) => _sink += data.p;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void TestString(string text) => _sink += text.Length;

    [MethodImpl(MethodImplOptions.NoInlining)]
    public void TestBytes(byte[] data) => _sink += data[^1];
}

/// <summary>Overrides the virtual method, so <c>virt</c> really dispatches virtually.</summary>
public sealed class DerivedCallCostService : CallCostService
{
    [MethodImpl(MethodImplOptions.NoInlining)]
    public override void TestVirt(int value) => base.TestVirt(value + 1);
}
