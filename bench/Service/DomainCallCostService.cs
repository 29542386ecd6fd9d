namespace XCall.Bench.Service;

/// <summary>The benchmark target as loaded into its own collectible load context by the domain rows.</summary>
public sealed class DomainCallCostService : CallCostService
{
    public override void TestVirt(int value) => base.TestVirt(value + 1);
}
