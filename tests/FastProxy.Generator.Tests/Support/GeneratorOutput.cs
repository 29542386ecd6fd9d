using System.Collections.Immutable;
using Microsoft.CodeAnalysis;

namespace XCall.Generator.Tests.Support;

/// <summary>What one generator run produced.</summary>
/// <param name="Result">The generator's sources and diagnostics.</param>
/// <param name="Compilation">The input compilation with the generated sources added.</param>
/// <param name="Diagnostics">Diagnostics the driver reported (the generator's own).</param>
internal sealed record GeneratorOutput(GeneratorRunResult Result, Compilation Compilation, ImmutableArray<Diagnostic> Diagnostics);
