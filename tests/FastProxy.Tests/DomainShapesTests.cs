using System.Reflection;
using XCall.Domain;
using XCall.Tests.Contracts;
using XCall.Tests.Shared;

namespace XCall.FastProxy.Tests;

/// <summary>Every method shape through the domain transport, into a real collectible load context.</summary>
public sealed class DomainShapesTests : ShapesContractTests, IDisposable
{
    private readonly DomainHost _host;
    private readonly IShapes _shapes;

    public DomainShapesTests()
    {
        _host = DomainHost.Load(ServicePath, "shapes-" + Guid.NewGuid().ToString("N"));
        _shapes = _host.Create<IShapes>();
    }

    internal static string ServicePath => typeof(DomainShapesTests).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "DomainServicePath").Value!;

    protected override IShapes Shapes => _shapes;

    public void Dispose() => _host.Dispose();
}
