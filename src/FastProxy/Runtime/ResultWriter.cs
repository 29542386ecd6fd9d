using System.ComponentModel;
using XCall.Marshal;

namespace XCall.Runtime;

/// <summary>Writes an async method's result into its reply (generated as a static lambda: no allocation).</summary>
[EditorBrowsable(EditorBrowsableState.Never)]
public delegate void ResultWriter<in T>(ref MarshalWriter writer, T value);
