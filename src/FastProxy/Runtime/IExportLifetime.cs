namespace XCall.Runtime;

/// <summary>
/// An exported object that must know when its connection no longer exposes it (released by the peer, its link
/// lost, the connection closed, or the frame that carried its id dropped): a stream's producer then stops.
/// </summary>
internal interface IExportLifetime
{
    /// <summary>Called once the object is no longer exposed, outside the reference table's lock, on whatever thread
    /// removed it (often the receiving thread): the implementation must not block.</summary>
    void Unexported();
}
