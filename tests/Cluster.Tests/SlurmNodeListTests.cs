namespace XCall.Cluster.Tests;

public sealed class SlurmNodeListTests
{
    [Theory]
    [InlineData("node1", "node1")]
    [InlineData("node[1-3,7]", "node1 node2 node3 node7")]
    [InlineData("n[08-11]", "n08 n09 n10 n11")]
    [InlineData("gpu[1-2]-ib,login", "gpu1-ib gpu2-ib login")]
    [InlineData("a[1-2],b[3],c", "a1 a2 b3 c")]
    [InlineData("rack[1-2]-n[1-2]", "rack1-n1 rack1-n2 rack2-n1 rack2-n2")]
    [InlineData("", "")]
    public void Expands_the_bracket_form(string list, string expected) =>
        Assert.Equal(expected.Split(' ', StringSplitOptions.RemoveEmptyEntries), SlurmNodeList.Expand(list));

    [Theory]
    [InlineData("node[1-3")]
    [InlineData("node[3-1]")]
    [InlineData("node[a-b]")]
    public void Rejects_a_malformed_list(string list) =>
        Assert.Throws<FormatException>(() => SlurmNodeList.Expand(list));
}
