using System.ComponentModel;
using XCall.Marshal;

namespace XCall.Runtime.CompilerServices;

/// <summary>Writes the arguments of a call that opens a stream (generated: a lambda over the method's arguments,
/// run when the stream is enumerated).</summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public delegate void StreamArgumentsWriter(ref MarshalWriter writer);
