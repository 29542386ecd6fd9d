namespace XCall.Samples.WorkerService;

/// <summary>The contract between the two roles of this sample.</summary>
[Remotable]
public interface IGreeter
{
    Task<string> GreetAsync(string name, CancellationToken cancellationToken);
}
