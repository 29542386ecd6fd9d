namespace XCall.Channels;

/// <summary>
/// Something an <see cref="Alternative"/> can wait on: a channel input (<see cref="ChannelIn{T}"/>),
/// a channel output (<see cref="ChannelOut{T}"/>), a <see cref="CSTimer"/> or <see cref="Skip"/>.
/// </summary>
public abstract class Guard
{
    private protected Guard()
    {
    }

    /// <summary>Throws when this guard cannot be used in an Alternative.</summary>
    internal virtual void CheckCanGuard()
    {
    }

    /// <summary>Whether the guard is ready now, registering nothing: a select's first look.</summary>
    internal abstract bool Poll();

    /// <summary>Returns true when ready now; otherwise arranges for <paramref name="alternative"/> to be told when it may be.</summary>
    internal abstract bool Enable(Alternative alternative);

    /// <summary>Undoes <see cref="Enable"/> and says whether the guard is ready now.</summary>
    internal abstract bool Disable(Alternative alternative);
}
