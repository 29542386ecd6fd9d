namespace XCall.Bench.Service;

/// <summary>The benchmark target as loaded into its own collectible load context by the domain rows.</summary>
public sealed class DomainCallCostService : CallCostService
{
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    public override void TestVirt(int value) => Mix(value + 1);
}
