namespace XCall.Channels;

/// <summary>An async method as an <see cref="IProcess"/>.</summary>
internal sealed class DelegateProcess(Func<CancellationToken, Task> body) : IProcess
{
    public Task RunAsync(CancellationToken cancellationToken) => body(cancellationToken);
}
