using System.ComponentModel;

namespace XCall.Domain;

/// <summary>
/// The context of one copy through a buffer between load contexts (<see cref="DomainLink.BeginCopy"/>):
/// the writer parks each [Remotable] object here and writes its index, the reader takes it back and wraps
/// it in a domain proxy over <see cref="Link"/>. The parked objects live as long as the copy, so a copy
/// that fails half way holds nothing afterwards.
/// </summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public sealed class DomainCopyScope
{
    private List<object?>? _parked; // most copies park nothing

    internal DomainCopyScope(DomainLink link) => Link = link;

    /// <summary>The link the copied references get their proxies over.</summary>
    public DomainLink Link { get; }

    internal int Park(object value)
    {
        _parked ??= [];
        _parked.Add(value);
        return _parked.Count - 1;
    }

    internal object Take(int index)
    {
        if (_parked is null || (uint)index >= (uint)_parked.Count || _parked[index] is not { } value)
        {
            throw new XCallProtocolException($"No parked object with index {index}.");
        }
        _parked[index] = null;
        return value;
    }
}
