namespace XCall.Channels.Distributed.TestApp;

/// <summary>A data class sent through a named channel with the marshaller XCall's generator emits for it.</summary>
public sealed record Job(int Id, string Text);

/// <summary>Only here so that the generator sees <see cref="Job"/> and emits its marshaller.</summary>
[Remotable]
public interface IJobs
{
    /// <summary>Takes a job.</summary>
    void Take(Job job);
}
