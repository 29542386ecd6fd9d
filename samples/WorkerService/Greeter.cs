namespace XCall.Samples.WorkerService;

/// <summary>The server's service, a singleton from the container.</summary>
public sealed class Greeter : IGreeter
{
    public Task<string> GreetAsync(string name, CancellationToken cancellationToken) => Task.FromResult($"Hello, {name}");
}
