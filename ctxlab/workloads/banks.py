"""Word and line banks for filler text, written for ctxlab (no external data).

Invariants:
- Every bank is a non-empty tuple of strings; the English, code, JSON, log and shell banks are
  pure ASCII, so filler made from them has one byte per character.
- The Chinese banks hold CJK words (3 UTF-8 bytes per character) and a few ASCII terms, as real
  Chinese technical prose mixes them.
"""

from __future__ import annotations


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


NOUNS = _words(
    """
    system request response cache server client module function record table index query
    result report schedule budget window context summary message token model agent tool user
    file directory branch commit release version config parameter setting value field column
    service endpoint handler worker queue thread process job task ticket order invoice account
    customer payment shipment address region cluster node replica snapshot backup migration
    schema document section chapter paragraph sentence draft review comment decision meeting
    team project deadline milestone estimate metric signal threshold limit error warning
    exception failure retry timeout latency throughput bandwidth memory disk network packet
    """
)
VERBS = _words(
    """
    updates returns stores loads reads writes checks validates parses renders builds deploys
    schedules measures records reports compares merges splits filters sorts groups counts
    tracks monitors caches retries rejects accepts forwards routes encodes decodes compresses
    expands summarizes describes explains resolves replaces removes creates publishes
    """
)
ADJECTIVES = _words(
    """
    new old current previous next final initial main primary secondary local remote shared
    private public stable large small empty full partial complete pending active idle slow
    fast simple complex default custom internal external recent daily weekly monthly annual
    detailed brief careful reliable expensive cheap critical minor valid invalid
    """
)
ADVERBS = _words(
    """
    usually often rarely quickly slowly carefully quietly automatically manually eventually
    initially finally briefly roughly exactly mostly partly clearly
    """
)
PREPOSITIONS = _words("in on for with from into over under after before during between across")
CONNECTIVES = (
    "However",
    "In practice",
    "As a result",
    "For this reason",
    "In the meantime",
    "On the other hand",
    "By default",
    "At the same time",
    "In most cases",
    "After the first run",
)
NAMES = _words(
    """
    Alice Bruno Chen Dana Elif Farid Grace Hiro Ines Jonas Kavya Lena Mateo Nadia Omar Priya
    Quinn Rosa Sami Tara Umar Vera Wei Xena Yusuf Zoe
    """
)

# Python code.
IDENTIFIERS = _words(
    """
    data items rows result config path name value key index count total offset limit buffer
    payload record entry cache state options context session client request response text
    """
)
TYPES = _words("int str float bool bytes list dict tuple None Path Any")
MODULES = _words("os sys json re math logging pathlib itertools functools collections typing dataclasses")
CODE_LINES = (
    "{a} = {b}.get({key!r}, {n})",
    "{a} = [{b} for {b} in {c} if {b}]",
    "if not {a}:\n{i}    return {n}",
    "for {a} in {b}:\n{i}    {c}.append({a})",
    "{a} += len({b})",
    "logger.debug({msg!r}, {a})",
    "{a} = self._{verb}({b}, {c})",
    "with open({b}, encoding='utf-8') as handle:\n{i}    {a} = handle.read()",
    "{a} = {{{key!r}: {b}, 'size': {n}}}",
    "if {a} > {n}:\n{i}    raise ValueError(f'{a} too large: {{{a}}}')",
    "{a} = sorted({b}, key=lambda item: item[{n}])",
    "try:\n{i}    {a} = int({b})\n{i}except ValueError:\n{i}    {a} = {n}",
)

# JSON records.
STATUSES = _words("active pending shipped delivered cancelled refunded processing on_hold")
CITIES = _words("Berlin Lisbon Osaka Denver Austin Nairobi Lima Oslo Seoul Porto Dublin Perth")
PRODUCTS = _words("keyboard monitor headset webcam charger backpack lamp kettle blender router")

# Log lines.
LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "DEBUG", "WARN", "ERROR")
SERVICES = _words("api worker scheduler gateway billing auth indexer ingest")
HTTP_METHODS = ("GET", "GET", "GET", "POST", "PUT", "DELETE")
HTTP_CODES = (200, 200, 200, 201, 204, 304, 400, 404, 409, 500, 503)
LOG_EVENTS = (
    "cache miss for key {key}",
    "connection pool at {n}/64",
    "retrying request {id} (attempt {small})",
    "flushed {n} rows to {table}",
    "slow query on {table}: {ms} ms",
    "job {id} finished in {ms} ms",
    "rate limit reached for client {id}",
    "checkpoint written: {path}",
)

# Shell sessions.
SHELL_COMMANDS = ("ls", "git_status", "git_log", "pytest", "grep", "du")
FILE_STEMS = _words(
    """
    main app models views utils config settings client server parser loader cache schema
    routes handlers tasks storage metrics cli errors types
    """
)
DIRS = _words("src tests docs scripts lib app core api")
EXTENSIONS = _words("py py py md json yaml toml txt")
MONTHS = _words("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec")

# Error strings (for failing calls).
ERRORS = (
    "ConnectionError: timed out after 30 seconds while connecting to {host}",
    "PermissionError: [Errno 13] Permission denied: '{path}'",
    "FileNotFoundError: [Errno 2] No such file or directory: '{path}'",
    "HTTPError: 503 Service Unavailable for url: https://{host}/v1/{table}",
    "TimeoutError: the command did not finish within 120 seconds",
    "ValueError: invalid literal for int() with base 10: '{key}'",
)

# Chinese prose: words grouped by role, and ASCII terms that appear in Chinese technical text.
ZH_SUBJECTS = _words(
    "系统 服务 用户 模型 工具 团队 项目 数据库 缓存 接口 任务 文件 日志 配置 摘要 上下文 "
    "客户 订单 报告 会议 版本 分支 测试 脚本 页面 网站 球队 联赛 比赛 城市"
)
ZH_VERBS = _words(
    "更新了 读取了 检查了 记录了 压缩了 生成了 提交了 处理了 分析了 优化了 修复了 "
    "部署了 保存了 返回了 统计了 合并了 设计了 整理了 确认了 调整了"
)
ZH_OBJECTS = _words(
    "全部结果 最新的数据 这份文档 每一条记录 错误信息 运行状态 主要指标 页面布局 "
    "测试用例 配置文件 比赛日程 积分榜 球员名单 历史记录 关键参数 输出格式 用户反馈 "
    "访问日志 性能瓶颈 依赖关系"
)
ZH_ADVERBIALS = _words(
    "在上线之前 根据用户的要求 为了减少延迟 按照原来的计划 在第一轮检索之后 "
    "由于窗口有限 在每次调用之前 经过仔细比较 在周末 按时"
)
ZH_CONNECTIVES = _words("因此 同时 另外 此外 然而 首先 其次 最后 总之 例如")
ZH_CLAUSES = _words(
    "效果明显好于预期 还需要进一步验证 结果已经写入报告 整体耗时有所下降 "
    "没有发现新的问题 团队决定继续推进 相关文件已经归档 用户表示满意"
)
ZH_ASCII_TERMS = _words("API Python JSON HTTP GPU SQL YAML v2 3.11 128 2026 token LLM")
CODE_VERBS = _words(
    "load save parse build fetch render check update merge compute apply collect format resolve"
)
