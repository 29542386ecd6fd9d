namespace XCall.Transport;

/// <summary>
/// A frame handler that passes every frame on to another (a channel wrapper's link to the connection above
/// it), so a transport can tell which connection its frames finally reach.
/// </summary>
internal interface IForwardingFrameHandler
{
    /// <summary>The handler the frames go to, or null before it is known.</summary>
    IFrameHandler? Target { get; }
}
