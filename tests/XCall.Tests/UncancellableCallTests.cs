using XCall.Runtime;
using XCall.Tests.Contracts;
using XCall.Transport;

namespace XCall.Tests;

/// <summary>
/// A call its caller can never cancel goes out marked <see cref="FrameFlags.Uncancellable"/>, and its method gets
/// <see cref="CancellationToken.None"/>; a call timeout can cancel a call, so a timed call is not marked.
/// </summary>
public sealed class UncancellableCallTests
{
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_call_timeout_makes_the_methods_token_one_that_can_be_cancelled(bool timed)
    {
        (InMemoryChannel served0, InMemoryChannel caller0) = InMemoryChannel.CreatePair($"uncancellable-{timed}");
        using var served = new XCallConnection(served0);
        served.ExposeRoot(new Shapes(), ContractRegistry.Get<IShapes>().Dispatcher);
        served.Start();
        using var caller = new XCallConnection(caller0, new ConnectionOptions { CallTimeout = timed ? TimeSpan.FromMinutes(5) : Timeout.InfiniteTimeSpan });
        caller.Start();
        IShapes proxy = caller.GetProxy<IShapes>();

        Assert.Equal(timed, proxy.CanCancel(CancellationToken.None));
        Assert.Equal(timed, await proxy.CanCancelAsync(CancellationToken.None));
        using var cts = new CancellationTokenSource();
        Assert.True(proxy.CanCancel(cts.Token));
        Assert.True(await proxy.CanCancelAsync(cts.Token));
    }
}
