/**
 * Hand-written material of the recall evaluation set (scripts/gen-recall-eval.mjs):
 * entity pools, fact topics (several memory phrasings, several differently worded
 * questions), noise memories and off-topic questions, in English and Chinese.
 *
 * A topic: `slots` maps each `{slot}` of its texts to a pool; `key` (optional) names the
 * slot that tells its facts apart inside one scope (a scope may hold 2–3 birthdays, one
 * per person); questions always name the key, so a question has one right memory.
 * Questions share some words with the memory (a name, a service, a topic word) and are
 * never copies of it: other word order, other words, question words, abbreviations.
 */

export const POOLS = {
  person:
    "Alice Bruno Chen Dmitri Elena Farah Gustavo Hana Ivan Jonas Keiko Liam Maya Nikolai Olga Priya Quentin Rosa Sven Tariq Uma Viktor Wen Ximena Yusuf Zoe".split(
      " ",
    ),
  service:
    "billing checkout search ledger payments inventory notifications auth reporting gateway scheduler analytics catalog shipping invoicing onboarding".split(
      " ",
    ),
  city: "Berlin Lisbon Toronto Nairobi Osaka Denver Madrid Oslo Dublin Seoul Austin Warsaw Zurich Lima Perth".split(
    " ",
  ),
  farCity: "Beijing Cairo Reykjavik Havana Kyoto Marrakesh Hanoi Anchorage".split(" "),
  country: "Peru Mongolia Iceland Kenya Portugal Vietnam Chile Norway".split(" "),
  zhFarCity: "拉萨 哈尔滨 乌鲁木齐 三亚 大理 喀什".split(" "),
  zhCountry: "秘鲁 蒙古 冰岛 肯尼亚 智利 挪威".split(" "),
  db: "Postgres MySQL MongoDB Cassandra Redis DynamoDB ClickHouse SQLite".split(" "),
  weekday: "Monday Tuesday Wednesday Thursday Friday".split(" "),
  month:
    "January February March April May June July August September October November December".split(
      " ",
    ),
  day: Array.from({ length: 28 }, (_, i) => String(i + 1)),
  lang: "Python Go Rust TypeScript Kotlin Ruby Bash Java".split(" "),
  editor: "Vim Emacs VSCode IntelliJ Helix Sublime".split(" "),
  pager: "PagerDuty Opsgenie Slack".split(" "),
  food: "peanuts shellfish gluten lactose sesame strawberries eggs".split(" "),
  pet: "dog cat parrot rabbit turtle hamster".split(" "),
  petName: "Biscuit Luna Pepper Mochi Rex Nala Ziggy Olive".split(" "),
  team: "platform data mobile security growth infra frontend design".split(" "),
  drink: "coffee tea matcha espresso".split(" "),
  milk: "oat soy almond whole".split(" "),
  hobby: "climbing chess piano cycling pottery running".split(" "),
  laptop: "ThinkPad MacBook XPS Framework".split(" "),
  book: "Dune|Middlemarch|Beloved|Solaris|Neuromancer|Rebecca".split("|"),
  company: "Acme Globex Initech Umbrella Hooli Vandelay Wonka Stark".split(" "),
  plan: "starter team business enterprise".split(" "),
  incident: "INC-2041 INC-2107 INC-2188 INC-2230 INC-2315 INC-2402 INC-2476 INC-2519".split(" "),
  room: "Everest Kilimanjaro Denali Elbrus Aconcagua".split(" "),
  time: "9:15|9:30|10:00|10:30|11:00".split("|"),
  rate: "50 100 200 500 1000".split(" "),
  conf: "KubeCon PyCon RustConf QCon StrangeLoop".split(" "),
  zhPerson: "张伟 李娜 王芳 刘洋 陈静 杨帆 赵磊 黄敏 周杰 吴婷 孙悦 马超 朱琳 胡斌 郭峰 林颖".split(
    " ",
  ),
  zhService:
    "支付服务 订单系统 用户中心 搜索服务 消息队列 库存系统 风控平台 报表系统 网关服务 推荐引擎 物流系统 账务系统".split(
      " ",
    ),
  zhCity: "北京 上海 深圳 杭州 成都 广州 南京 武汉 西安 厦门".split(" "),
  zhDb: "MySQL PostgreSQL Redis TiDB MongoDB ClickHouse".split(" "),
  zhWeekday: "一 二 三 四 五".split(" "),
  zhMonth: Array.from({ length: 12 }, (_, i) => String(i + 1)),
  zhTool: "钉钉 企业微信 飞书 电话".split(" "),
  zhTeam: "基础架构 数据平台 移动端 安全 增长 前端".split(" "),
  zhRoom: "长城厅 黄山厅 西湖厅 泰山厅".split(" "),
  zhHour: "九 十 十一".split(" "),
  zhFood: "花生 海鲜 芒果 牛奶 鸡蛋 小麦".split(" "),
  zhPet: "柯基 金毛 布偶猫 鹦鹉 兔子 仓鼠".split(" "),
  zhPetName: "豆豆 球球 可乐 年糕 旺财 雪球".split(" "),
  zhEditor: "Vim VSCode IntelliJ Emacs".split(" "),
  zhCoffee: "美式 拿铁 澳白 摩卡".split(" "),
  zhMilk: "燕麦奶 豆奶 全脂奶".split(" "),
  zhCompany: "星辰科技 蓝海集团 华彩传媒 远航物流 云帆软件 金桥银行".split(" "),
  zhPlan: "基础版 专业版 企业版".split(" "),
  zhConf: "云原生大会 数据库大会 前端大会 安全峰会".split(" "),
  zhRate: "50 100 200 500".split(" "),
};

export const EN_TOPICS = [
  {
    id: "birthday",
    slots: { person: "person", month: "month", day: "day" },
    key: "person",
    memory: [
      "{person}'s birthday is on {month} {day}.",
      "{person} celebrates their birthday every year on {month} {day}; the team orders a cake.",
      "Note to self: birthday of {person} is {month} {day}.",
    ],
    query: [
      "When is {person}'s birthday?",
      "what date does {person} celebrate a birthday",
      "{person} birthday — which day?",
      "remind me which day {person} has their birthday",
    ],
  },
  {
    id: "deploy-day",
    slots: { service: "service", weekday: "weekday" },
    key: "service",
    memory: [
      "Production deploys of {service} go out every {weekday} after the change review.",
      "We only ship {service} to production on {weekday}, once the review is done.",
      "{service} release train: {weekday} mornings, production only after review.",
    ],
    query: [
      "which day do we deploy {service} to production?",
      "when can I ship {service} to prod",
      "{service} production release day",
      "on what weekday does the {service} release go out",
    ],
  },
  {
    id: "database",
    slots: { service: "service", db: "db", city: "city" },
    key: "service",
    memory: [
      "The {service} service keeps its data in {db}, with a read replica in {city}.",
      "{service} runs on {db}; nightly backups are copied to {city}.",
      "Storage for {service}: a {db} cluster (replica in {city}).",
    ],
    query: [
      "which database backs the {service} service?",
      "what does {service} store its data in",
      "{service} data store and replica location",
      "is {service} on a {db} cluster or something else",
    ],
  },
  {
    id: "oncall",
    slots: { service: "service", person: "person", pager: "pager" },
    key: "service",
    memory: [
      "{person} is on call for {service} this week; page them via {pager}.",
      "On-call rotation for {service}: {person}, reachable through {pager}.",
      "This week's {service} pager duty belongs to {person} ({pager}).",
    ],
    query: [
      "who is on call for {service} right now?",
      "who should I page about a {service} problem",
      "{service} on-call engineer this week",
    ],
  },
  {
    id: "rate-limit",
    slots: { service: "service", rate: "rate" },
    key: "service",
    memory: [
      "The {service} API rate limit is {rate} requests per second per client.",
      "{service} API: clients get throttled above {rate} req/s.",
      "Heads-up: {service} API throttles at {rate} requests a second.",
    ],
    query: [
      "what is the rate limit of the {service} API?",
      "how many requests per second can a client send to {service}",
      "{service} API throttling threshold",
    ],
  },
  {
    id: "secrets",
    slots: { service: "service", team: "team" },
    key: "service",
    memory: [
      "Secrets for {service} live in Vault under kv/{team}/{service}.",
      "{service} credentials are stored in Vault at the kv/{team}/{service} path.",
    ],
    query: [
      "where are the {service} secrets kept?",
      "vault path for {service} credentials",
      "where do I find credentials for {service}",
    ],
  },
  {
    id: "standup",
    slots: { team: "team", time: "time", room: "room" },
    key: "team",
    category: "general",
    memory: [
      "The {team} team standup is at {time} every weekday in the {room} room.",
      "Daily standup of the {team} team: {time}, {room} meeting room.",
    ],
    query: [
      "what time is the {team} standup?",
      "when does the {team} team meet for standup",
      "{team} daily standup room",
    ],
  },
  {
    id: "incident",
    slots: { incident: "incident", service: "service" },
    key: "incident",
    category: "episodic",
    memory: [
      "Incident {incident}: {service} was down for 40 minutes after a bad config push; rolled back.",
      "Postmortem {incident} — {service} outage caused by an expired TLS certificate.",
      "{incident} ({service}): a database failover took too long; alerting was tuned afterwards.",
    ],
    query: [
      "what caused incident {incident}?",
      "summary of {incident}",
      "why did the {incident} outage happen",
    ],
  },
  {
    id: "customer",
    slots: { company: "company", plan: "plan", month: "month" },
    key: "company",
    memory: [
      "Customer {company} is on the {plan} plan and renews in {month}.",
      "{company} signed the {plan} contract; renewal is due in {month}.",
    ],
    query: [
      "when does {company} renew?",
      "which plan is {company} on",
      "{company} contract renewal month",
    ],
  },
  {
    id: "pet",
    slots: { pet: "pet", petName: "petName" },
    key: "pet",
    category: "preference",
    memory: [
      "Has a {pet} named {petName}; the vet visit is every spring.",
      "{petName} is the family {pet} and hates car rides.",
    ],
    query: ["what's the name of my {pet}?", "what is our {pet} called", "name of the family {pet}"],
  },
  {
    id: "travel",
    slots: { city: "city", month: "month", day: "day", conf: "conf" },
    key: "city",
    category: "episodic",
    memory: [
      "Flying to {city} on {month} {day} for {conf}.",
      "Trip to {city}: departure {month} {day}, hotel near the {conf} venue.",
      "Booked flights for {conf} in {city}, leaving {month} {day}.",
    ],
    query: [
      "when is my trip to {city}?",
      "which conference am I going to in {city}",
      "date of the flight to {city}",
    ],
  },
  {
    id: "allergy",
    slots: { food: "food" },
    category: "preference",
    memory: [
      "Food allergy: {food}. Check the menu when ordering team lunch.",
      "Allergic to {food} — mention the allergy when ordering food.",
    ],
    query: ["what food allergy do I have?", "which food should I avoid because of my allergy"],
  },
  {
    id: "editor",
    slots: { editor: "editor" },
    category: "preference",
    memory: [
      "Prefers {editor} with a dark theme for coding.",
      "Editor of choice: {editor}, dark color scheme, relative line numbers.",
    ],
    query: ["which editor do I use for coding?", "my favourite code editor and theme"],
  },
  {
    id: "automation-language",
    slots: { lang: "lang" },
    category: "preference",
    memory: [
      "Writes automation scripts in {lang}, never in shell.",
      "For automation, use {lang} scripts; keep shell for one-liners.",
    ],
    query: [
      "what language should automation scripts be written in?",
      "preferred language for automation",
    ],
  },
  {
    id: "coffee",
    slots: { drink: "drink", milk: "milk" },
    category: "preference",
    memory: [
      "Takes {drink} with {milk} milk, no sugar.",
      "Usual order: {drink}, {milk} milk, no sugar.",
    ],
    query: ["how do I take my {drink}?", "my usual {drink} order", "do I want sugar in my {drink}"],
  },
  {
    id: "home-city",
    slots: { city: "city" },
    category: "preference",
    memory: [
      "Home city is {city}; commutes by bike.",
      "Lives in {city} (home city), about 20 minutes from the office.",
    ],
    query: ["what is my home city?", "how far is home from the office"],
  },
  {
    id: "hobby",
    slots: { hobby: "hobby" },
    category: "preference",
    memory: ["Hobby: {hobby}, most Sunday mornings.", "Spends Sunday mornings on {hobby}."],
    query: ["what is my hobby?", "what do I do on Sunday mornings"],
  },
  {
    id: "manager",
    slots: { person: "person", team: "team" },
    memory: [
      "Reports to {person}, the {team} engineering manager.",
      "Manager: {person} ({team} engineering); 1:1 every other Tuesday.",
    ],
    query: [
      "who is my manager?",
      "when is my 1:1 with my manager",
      "which engineering manager do I report to",
    ],
  },
  {
    id: "laptop",
    slots: { laptop: "laptop" },
    memory: [
      "Work laptop is a {laptop} with 32 GB RAM, asset tag LT-4471.",
      "Company laptop: {laptop}, asset tag LT-4471, disk encryption on.",
    ],
    query: ["which laptop do I have for work?", "asset tag of my work laptop"],
  },
  {
    id: "book-club",
    slots: { book: "book" },
    memory: [
      "Reading {book} for the book club; meeting is on the last Thursday.",
      "Book club pick this month: {book}.",
    ],
    query: ["which book is the book club reading?", "what am I reading for book club"],
  },
];

export const ZH_TOPICS = [
  {
    id: "zh-birthday",
    slots: { p: "zhPerson", m: "zhMonth", d: "day" },
    key: "p",
    memory: ["{p}的生日是{m}月{d}日。", "每年{m}月{d}日是{p}的生日，团队会订蛋糕。"],
    query: ["{p}生日是哪天？", "{p}的生日在几月几号", "帮我查一下{p}的生日"],
  },
  {
    id: "zh-deploy",
    slots: { s: "zhService", w: "zhWeekday" },
    key: "s",
    memory: [
      "{s}每周{w}发布到生产环境，发布前需要评审。",
      "{s}只在星期{w}上线生产，评审通过后才能发布。",
    ],
    query: ["{s}哪天发布到生产？", "{s}什么时候可以上线", "{s}的发布日是星期几"],
  },
  {
    id: "zh-database",
    slots: { s: "zhService", db: "zhDb", c: "zhCity" },
    key: "s",
    memory: ["{s}的数据存放在{db}，{c}机房有只读副本。", "{s}使用{db}存储数据，每晚备份到{c}。"],
    query: ["{s}用的是什么数据库？", "{s}的数据存储在哪里", "{s}数据库的副本在哪个机房"],
  },
  {
    id: "zh-oncall",
    slots: { s: "zhService", p: "zhPerson", t: "zhTool" },
    key: "s",
    memory: ["本周{p}负责{s}值班，有问题用{t}呼叫。", "{s}这周的值班工程师是{p}，联系方式：{t}。"],
    query: ["这周谁负责{s}值班？", "{s}出问题了应该找谁", "{s}值班工程师是谁"],
  },
  {
    id: "zh-rate-limit",
    slots: { s: "zhService", r: "zhRate" },
    key: "s",
    memory: [
      "{s}接口限流为每秒{r}次请求。",
      "{s}的接口每个客户端每秒最多{r}次调用，超过会被限流。",
    ],
    query: ["{s}接口的限流阈值是多少？", "{s}每秒能调用多少次", "{s}接口限流"],
  },
  {
    id: "zh-standup",
    slots: { t: "zhTeam", h: "zhHour", room: "zhRoom" },
    key: "t",
    memory: ["{t}团队每天上午{h}点在{room}开站会。", "{t}组的晨会：每个工作日{h}点，地点{room}。"],
    query: ["{t}团队的站会几点开始？", "{t}组晨会在哪个会议室", "{t}团队每天什么时候开会"],
  },
  {
    id: "zh-travel",
    slots: { c: "zhCity", m: "zhMonth", d: "day", conf: "zhConf" },
    key: "c",
    memory: ["{m}月{d}日出差去{c}参加{conf}。", "去{c}的出差行程：{m}月{d}日出发，参加{conf}。"],
    query: ["什么时候去{c}出差？", "去{c}参加什么会议", "{c}出差的日期"],
  },
  {
    id: "zh-customer",
    slots: { co: "zhCompany", plan: "zhPlan", m: "zhMonth" },
    key: "co",
    memory: ["客户{co}使用{plan}，{m}月到期续约。", "{co}签的是{plan}合同，续约时间在{m}月。"],
    query: ["{co}什么时候续约？", "{co}用的是哪个版本", "{co}的合同几月到期"],
  },
  {
    id: "zh-allergy",
    slots: { f: "zhFood" },
    category: "preference",
    memory: ["对{f}过敏，点餐时一定要提醒。", "食物过敏：{f}，订团餐时注意。"],
    query: ["我对什么食物过敏？", "点餐时有什么过敏需要注意"],
  },
  {
    id: "zh-pet",
    slots: { pet: "zhPet", name: "zhPetName" },
    key: "pet",
    category: "preference",
    memory: ["家里养了一只{pet}，名字叫{name}。", "{name}是家里的{pet}，不喜欢坐车。"],
    query: ["我家{pet}叫什么名字？", "家里的{pet}名字"],
  },
  {
    id: "zh-editor",
    slots: { e: "zhEditor" },
    category: "preference",
    memory: ["写代码习惯用{e}，喜欢深色主题。", "编辑器偏好：{e}，深色主题，显示相对行号。"],
    query: ["我写代码用什么编辑器？", "我喜欢的编辑器和主题"],
  },
  {
    id: "zh-coffee",
    slots: { c: "zhCoffee", milk: "zhMilk" },
    category: "preference",
    memory: ["咖啡只喝{c}，配{milk}，不加糖。", "常点的咖啡：{c}加{milk}，无糖。"],
    query: ["我平时喝什么咖啡？", "我的咖啡要不要加糖"],
  },
];

/** Noise: everyday memories about the scope's entities that answer none of the questions. */
export const EN_NOISE = [
  {
    text: "{person} joined the {team} team in {month}.",
    slots: { person: "person", team: "team", month: "month" },
  },
  {
    text: "Had lunch with {person} at the Thai place near the office.",
    slots: { person: "person" },
  },
  { text: "{service} dashboards moved to the new Grafana folder.", slots: { service: "service" } },
  {
    text: "Review the {service} runbook before the end of the quarter.",
    slots: { service: "service" },
  },
  {
    text: "{person} shared slides about {service} latency.",
    slots: { person: "person", service: "service" },
  },
  {
    text: "Booked a room for the {team} retro on {weekday}.",
    slots: { team: "team", weekday: "weekday" },
  },
  { text: "The {city} office got a new espresso machine.", slots: { city: "city" } },
  {
    text: "Renewed the TLS certificate of {service} ahead of expiry.",
    slots: { service: "service" },
  },
  { text: "{person} likes {drink} in the afternoon.", slots: { person: "person", drink: "drink" } },
  { text: "Read an article about {db} internals and write amplification.", slots: { db: "db" } },
  {
    text: "{person} is learning {lang} and asked for code review help.",
    slots: { person: "person", lang: "lang" },
  },
  { text: "Ordered snacks without {food} for the office kitchen.", slots: { food: "food" } },
  {
    text: "Migrated the {service} cron jobs to the {service} scheduler.",
    slots: { service: "service" },
  },
  {
    text: "{company} asked for an invoice copy for {month}.",
    slots: { company: "company", month: "month" },
  },
  { text: "Gave a talk at {conf} about incident reviews.", slots: { conf: "conf" } },
  {
    text: "Paired with {person} on flaky tests in {service}.",
    slots: { person: "person", service: "service" },
  },
  {
    text: "The {team} team moved their planning to {weekday} afternoons.",
    slots: { team: "team", weekday: "weekday" },
  },
  { text: "Weekend plan: visit friends in {city}.", slots: { city: "city" } },
];

export const ZH_NOISE = [
  { text: "{p}上个月加入了{t}团队。", slots: { p: "zhPerson", t: "zhTeam" } },
  { text: "和{p}在公司楼下吃了午饭。", slots: { p: "zhPerson" } },
  { text: "{s}的监控面板迁移到了新的目录。", slots: { s: "zhService" } },
  { text: "季度末之前要复查{s}的运维手册。", slots: { s: "zhService" } },
  { text: "{p}分享了关于{s}延迟优化的幻灯片。", slots: { p: "zhPerson", s: "zhService" } },
  { text: "{c}办公室新买了一台咖啡机。", slots: { c: "zhCity" } },
  { text: "提前续签了{s}的证书。", slots: { s: "zhService" } },
  { text: "读了一篇关于{db}内部实现的文章。", slots: { db: "zhDb" } },
  { text: "{co}要求补开{m}月的发票。", slots: { co: "zhCompany", m: "zhMonth" } },
  { text: "和{p}一起排查了{s}的偶发测试失败。", slots: { p: "zhPerson", s: "zhService" } },
  { text: "周末打算去{c}看朋友。", slots: { c: "zhCity" } },
  { text: "{t}团队把迭代计划会改到了周{w}下午。", slots: { t: "zhTeam", w: "zhWeekday" } },
];

/** Questions about things no memory of any scope is about. */
export const EN_OFF_TOPIC = [
  "what is the weather in {city} this weekend?",
  "how do I make a sourdough starter",
  "who won the football world cup in 2010",
  "recommend a good sci-fi movie for tonight",
  "what's the capital of {country}",
  "translate good morning into Portuguese",
  "how tall is Mount Kilimanjaro",
  "best way to remove a red wine stain",
  "how many calories are in a banana",
  "when did the Roman empire fall",
  "exchange rate from euros to yen",
  "tips for growing tomatoes on a balcony",
  "how to tie a bowline knot",
  "what time does the sun set in {city} today",
  "explain the rules of cricket",
  "is it going to rain tomorrow in {city}",
  "how long should I boil an egg",
  "what is the population of {country}",
  "who painted the ceiling of the Sistine Chapel",
  "good hiking trails near {city}",
  "how do I train my dog to sit",
  "which team won the basketball finals",
  "recommend a book about ancient history",
  "what are good coffee shops in {city}",
];

export const ZH_OFF_TOPIC = [
  "{city}今天天气怎么样",
  "红烧肉怎么做才好吃",
  "上一届世界杯冠军是哪个国家",
  "推荐一部好看的科幻电影",
  "珠穆朗玛峰有多高",
  "衣服上的红酒渍怎么洗掉",
  "一根香蕉有多少热量",
  "明天会下雨吗",
  "怎么学习弹吉他",
  "唐朝是哪一年建立的",
  "推荐几本关于历史的书",
  "附近有什么好吃的火锅店",
  "如何提高睡眠质量",
  "周末去哪里爬山比较好",
  "多肉植物怎么养",
  "{country}的首都是哪里",
];
