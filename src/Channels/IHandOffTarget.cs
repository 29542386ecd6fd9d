namespace XCall.Channels;

/// <summary>A completion whose result is already stored, waiting for <see cref="HandOff"/> to signal it.</summary>
internal interface IHandOffTarget
{
    /// <summary>Signals the completion; the continuation runs inline unless told otherwise.</summary>
    void Complete(bool runContinuationAsynchronously);
}
