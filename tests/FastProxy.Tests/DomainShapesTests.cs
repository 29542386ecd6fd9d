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

    [Fact]
    public void A_record_nothing_can_change_crosses_as_itself_and_a_mutable_class_as_a_copy()
    {
        var point = new Point(1, 2);
        Assert.Same(point, _shapes.Keep(point));
        var order = new Order { Id = 3, Origin = point };
        Order back = _shapes.RoundTrip(order);
        Assert.NotSame(order, back);
        Assert.Equal(3, back.Id);
        Assert.Equal(point, back.Origin);
    }

    public void Dispose() => _host.Dispose();
}
