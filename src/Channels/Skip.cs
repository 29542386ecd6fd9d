namespace XCall.Channels;

/// <summary>A guard that is always ready: with PriSelect last, it turns a select into a poll.</summary>
public sealed class Skip : Guard
{
    internal override bool Poll() => true;

    internal override bool Enable(Alternative alternative) => true;

    internal override bool Disable(Alternative alternative) => true;
}
