using System.ComponentModel;

namespace XCall.Domain;

/// <summary>Base of the generated domain proxies.</summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public abstract class DomainProxyBase
{
    /// <summary>Creates a proxy over <paramref name="link"/>.</summary>
    protected DomainProxyBase(DomainLink link) => Link = link;

    /// <summary>The link to the target object.</summary>
    protected DomainLink Link { get; }
}
